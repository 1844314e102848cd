#pragma once
#include <napi.h>

namespace weft {
// Adds exports.testing (testing.cc): test hooks for the quantized kernels.
void register_testing(Napi::Env env, Napi::Object exports);
}
