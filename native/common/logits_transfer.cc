// Handing logits to JavaScript without a copy (see logits_transfer.h).
#include "logits_transfer.h"

#include <algorithm>
#include <cstring>

namespace weft {
namespace {

// What an external ArrayBuffer's finalizer gets: the pool (kept alive) and the lease.
struct LeaseHint {
  std::shared_ptr<LogitsBuffers> pool;
  uint64_t lease;
};

}  // namespace

LogitsBuffers::Buffer LogitsBuffers::take(size_t floats) {
  floats = std::max<size_t>(floats, 1);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // The newest free buffer first: its pages are the most likely to be resident.
    for (size_t i = free_.size(); i-- > 0;) {
      if (free_[i].capacity < floats) continue;
      Buffer b = std::move(free_[i]);
      free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
      return b;
    }
  }
  Buffer b;
  b.data.reset(new float[floats]);  // not zero-filled: the LM head writes every value
  b.capacity = floats;
  std::lock_guard<std::mutex> lock(mutex_);
  ++allocated_;
  return b;
}

void LogitsBuffers::give_back(Buffer buffer) {
  if (!buffer.data) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_.size() < kMaxFree) {
    free_.push_back(std::move(buffer));
    return;
  }
  // Full: keep the larger buffers (a step with more rows needs them).
  auto smallest = std::min_element(free_.begin(), free_.end(), [](const Buffer& a, const Buffer& b) { return a.capacity < b.capacity; });
  if (smallest->capacity < buffer.capacity) *smallest = std::move(buffer);
}

size_t LogitsBuffers::allocated() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return allocated_;
}

size_t LogitsBuffers::lent() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lent_.size();
}

void LogitsBuffers::reclaim(uint64_t lease) {
  Buffer buffer;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find_if(lent_.begin(), lent_.end(), [&](const Lent& l) { return l.lease == lease; });
    if (it == lent_.end()) return;  // released earlier
    buffer = std::move(it->buffer);
    lent_.erase(it);
  }
  give_back(std::move(buffer));
}

void LogitsBuffers::finalize(napi_env, void*, void* hint) {
  auto* h = static_cast<LeaseHint*>(hint);
  h->pool->reclaim(h->lease);
  delete h;
}

Napi::Float32Array LogitsBuffers::to_js(Napi::Env env, Buffer buffer, size_t floats, bool copy) {
  if (!copy && floats > 0) {
    uint64_t lease;
    float* data = buffer.data.get();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      lease = next_lease_++;
      lent_.push_back(Lent{lease, std::move(buffer)});
    }
    auto* hint = new LeaseHint{shared_from_this(), lease};
    napi_value array_buffer;
    const napi_status status =
        napi_create_external_arraybuffer(env, data, floats * sizeof(float), &LogitsBuffers::finalize, hint, &array_buffer);
    if (status == napi_ok) return Napi::Float32Array::New(env, floats, Napi::ArrayBuffer(env, array_buffer), 0);
    // Refused (napi_no_external_buffers_allowed under a V8 memory cage): copy instead.
    delete hint;
    bool pending = false;
    if (napi_is_exception_pending(env, &pending) == napi_ok && pending) {
      napi_value ignored;
      napi_get_and_clear_last_exception(env, &ignored);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find_if(lent_.begin(), lent_.end(), [&](const Lent& l) { return l.lease == lease; });
    buffer = std::move(it->buffer);
    lent_.erase(it);
  }
  Napi::Float32Array out = Napi::Float32Array::New(env, floats);
  if (floats > 0) std::memcpy(out.Data(), buffer.data.get(), floats * sizeof(float));
  give_back(std::move(buffer));
  return out;
}

bool LogitsBuffers::release(Napi::Env env, const Napi::Value& value) {
  if (!value.IsTypedArray() || value.As<Napi::TypedArray>().TypedArrayType() != napi_float32_array) return false;
  Napi::ArrayBuffer array_buffer = value.As<Napi::Float32Array>().ArrayBuffer();
  const void* data = array_buffer.Data();
  if (data == nullptr) return false;  // already detached
  uint64_t lease = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Lent& l : lent_)
      if (l.buffer.data.get() == data) lease = l.lease;
  }
  if (lease == 0) return false;
  // Detached first: from here on JavaScript cannot reach the memory, so it may be reused.
  array_buffer.Detach();
  reclaim(lease);
  return true;
}

}  // namespace weft
