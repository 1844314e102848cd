#pragma once
#include <napi.h>

namespace weft {
// Adds the CpuModel class to the addon's exports.
void register_cpu_model(Napi::Env env, Napi::Object exports);
}
