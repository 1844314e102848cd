#pragma once
#include <napi.h>

namespace weft {
// Adds the Gated DeltaNet kernels' hooks (linear_testing.cc) to exports.testing.
void register_linear_testing(Napi::Env env, Napi::Object testing);
}
