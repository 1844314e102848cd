// The one N-API async-job pattern of weft's addons (the CPU addon, native/src;
// the OpenVINO addon, native/openvino): run a body on a libuv worker thread,
// then settle a promise on the JS thread. Header-only, so each addon compiles
// its own copy; both CMake projects put native/common on their include path.
//
//   class LoadJob : public weft::PromiseJob { void Execute() override { guarded([&] { ... }); } };
//   return (new LoadJob(env, "weft:cpu", owner, &busy_))->queue();
//
// A job marks its owner busy for as long as it is in flight (`*busy` is true
// from the constructor until the promise settles), and keeps the owner's JS
// object alive so that `busy` stays valid. The promise always settles: an
// error thrown by Execute's body becomes a rejection (guarded), and so does
// one thrown while building the result on the JS thread. Nothing here ends the
// process.
#pragma once
#include <napi.h>

#include <exception>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

namespace weft {

// A JS error for a C++ exception caught on the JS thread.
inline Napi::Error native_error(Napi::Env env, const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e)) return Napi::Error::New(env, "out of memory");
  return Napi::Error::New(env, e.what());
}

// A promise already rejected with `error`. Deferreds are made only where they
// are settled: an unsettled one is a persistent handle that lives forever.
inline Napi::Value rejected(Napi::Env env, const Napi::Value& error) {
  auto d = Napi::Promise::Deferred::New(env);
  d.Reject(error);
  return d.Promise();
}

// The same with a new Error of `message`.
inline Napi::Value rejected(Napi::Env env, const std::string& message) {
  return rejected(env, Napi::Error::New(env, message).Value());
}

// Runs `body` (which returns the promise of the job it queued, or of an early
// rejection) so that any error it throws becomes a rejected promise instead:
// callers always get a promise.
template <typename Body>
Napi::Value settle_errors(Napi::Env env, Body&& body) {
  try {
    return body();
  } catch (const Napi::Error& e) {
    return rejected(env, e.Value());
  } catch (const std::exception& e) {  // e.g. bad_alloc copying a huge typed array
    return rejected(env, native_error(env, e).Value());
  }
}

// A promise-returning AsyncWorker. Subclasses implement Execute() (on the
// worker thread, through guarded) and, for a value other than undefined,
// result() (on the JS thread).
class PromiseJob : public Napi::AsyncWorker {
 public:
  // `name`: the async resource name (async_hooks); `owner`: the JS object kept
  // alive while the job runs; `busy`: its in-flight flag.
  PromiseJob(Napi::Env env, const char* name, Napi::Object owner, bool* busy)
      : Napi::AsyncWorker(env, name), deferred_(Napi::Promise::Deferred::New(env)), busy_(busy) {
    owner_ = Napi::Persistent(owner);
    *busy_ = true;
  }

  // Queues the job and returns its promise. The job deletes itself once it
  // has settled (Napi::AsyncWorker). If queueing fails the job never runs: it
  // is deleted, its owner is free again, and the error propagates (to a
  // rejection, through settle_errors).
  Napi::Promise queue() {
    Napi::Promise p = deferred_.Promise();
    try {
      Queue();
    } catch (...) {
      *busy_ = false;
      delete this;
      throw;
    }
    return p;
  }

 protected:
  // The resolved value, built on the JS thread after Execute succeeded.
  virtual Napi::Value result(Napi::Env env) { return env.Undefined(); }

  // Building the result may fail (e.g. no memory for a logits array): the
  // promise is rejected then, so it settles either way.
  void OnOK() override {
    *busy_ = false;
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    try {
      deferred_.Resolve(result(env));
    } catch (const Napi::Error& e) {
      deferred_.Reject(e.Value());
    } catch (const std::exception& e) {
      deferred_.Reject(native_error(env, e).Value());
    }
  }

  void OnError(const Napi::Error& e) override {
    *busy_ = false;
    deferred_.Reject(e.Value());
  }

  // Runs fn on the worker thread, turning what goes wrong into SetError (the
  // promise's rejection): an error message fn returns (a non-empty
  // std::string; fn may also return nothing), an allocation failure, or any
  // other std::exception.
  template <typename Fn>
  void guarded(Fn&& fn) {
    try {
      if constexpr (std::is_void_v<decltype(fn())>) {
        fn();
      } else {
        const std::string error = fn();
        if (!error.empty()) SetError(error);
      }
    } catch (const std::bad_alloc&) {
      SetError("out of memory");
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }

 private:
  Napi::Promise::Deferred deferred_;
  Napi::ObjectReference owner_;
  bool* busy_;
};

}  // namespace weft
