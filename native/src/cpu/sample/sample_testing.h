// Test hooks of the native sampler (sample_testing.cc), added to exports.testing.
#pragma once
#include <napi.h>

namespace weft {
void register_sample_testing(Napi::Env env, Napi::Object testing);
}
