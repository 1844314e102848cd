// Entry point of the weft native addon. Each backend registers its exports here.
#include <napi.h>

#include "cpu/binding/binding.h"
#include "cpu/binding/testing.h"

static Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("abiVersion", Napi::Number::New(env, 9));
  weft::register_cpu_model(env, exports);
  weft::register_testing(env, exports);
  return exports;
}

NODE_API_MODULE(weft_native, Init)
