// Handing a step's logits to JavaScript without zero-filling or copying them.
//
// A step's logits (rows x vocab floats: 39 MB for 64 rows of Qwen's 151,936)
// are written by the LM head straight into a buffer from a LogitsBuffers pool,
// and that buffer becomes the memory of the Float32Array JavaScript gets (an
// external ArrayBuffer). When JavaScript lets go of it (released: detached,
// or garbage-collected) the buffer goes back to the pool, so a steady stream
// of steps reuses two or three buffers whose pages are already mapped. Fresh
// buffers are not zero-filled: the LM head writes every value.
//
// Where external buffers are refused (Electron's V8 memory cage, or
// `copyLogits` set for tests and benchmarks) the logits are copied into an
// ordinary Float32Array and the buffer goes back to the pool at once.
#pragma once
#include <napi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace weft {

// Reusable float buffers. Shared (shared_ptr) by the model and by every
// buffer lent to JavaScript, so a buffer finalized after the model is
// disposed still has a pool to return to. Thread-safe: taken on the libuv
// worker, given back on the JS thread.
class LogitsBuffers : public std::enable_shared_from_this<LogitsBuffers> {
 public:
  struct Buffer {
    std::unique_ptr<float[]> data;
    size_t capacity = 0;  // floats
  };

  // A buffer of at least `floats` floats (contents undefined); never empty.
  Buffer take(size_t floats);
  // Returns a buffer; kept for reuse up to kMaxFree, else freed.
  void give_back(Buffer buffer);

  // Buffers allocated so far, and buffers lent to JavaScript now (test hooks).
  size_t allocated() const;
  size_t lent() const;

  // Turns `buffer` (holding `floats` logits) into a Float32Array: external
  // where allowed (the buffer is lent until JavaScript releases it), copied
  // otherwise (or when `copy`). Throws Napi::Error when neither works.
  Napi::Float32Array to_js(Napi::Env env, Buffer buffer, size_t floats, bool copy);

  // Detaches a Float32Array this pool lent (its memory returns to the pool
  // now; the array reads as empty afterwards). Anything else is left alone.
  // Returns whether it was one of ours.
  bool release(Napi::Env env, const Napi::Value& value);

 private:
  static constexpr size_t kMaxFree = 2;
  mutable std::mutex mutex_;
  struct Lent {
    uint64_t lease;  // the ArrayBuffer's lease: a pointer may be lent again later, a lease never
    Buffer buffer;
  };
  // Called from the ArrayBuffer's finalizer: returns the lease's buffer unless
  // release() already did.
  static void finalize(napi_env env, void* data, void* hint);
  void reclaim(uint64_t lease);

  std::vector<Buffer> free_;
  std::vector<Lent> lent_;  // buffers JavaScript holds
  uint64_t next_lease_ = 1;
  size_t allocated_ = 0;
};

}  // namespace weft
