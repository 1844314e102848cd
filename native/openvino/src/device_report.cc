#include "device_report.h"

#include <algorithm>
#include <exception>

namespace weft_ov {
namespace {

// The properties an Arc (or CPU) report needs: what the device is, which precisions it
// computes in and which it would pick, and the cache precisions a PagedAttention model
// would compile with. Names a plugin does not list are left out (GPU-only ones on CPU).
const char* const kInteresting[] = {
    "FULL_DEVICE_NAME",         "DEVICE_ARCHITECTURE",     "DEVICE_TYPE",          "DEVICE_ID",
    "OPTIMIZATION_CAPABILITIES", "INFERENCE_PRECISION_HINT", "EXECUTION_MODE_HINT", "KV_CACHE_PRECISION",
    "KEY_CACHE_PRECISION",      "VALUE_CACHE_PRECISION",   "KEY_CACHE_GROUP_SIZE", "VALUE_CACHE_GROUP_SIZE",
    "PERFORMANCE_HINT",         "INFERENCE_NUM_THREADS",   "NUM_STREAMS",          "ENABLE_HYPER_THREADING",
    "GPU_DEVICE_TOTAL_MEM_SIZE", "GPU_EXECUTION_UNITS_COUNT", "GPU_UARCH_VERSION", "DEVICE_GOPS",
    "RANGE_FOR_ASYNC_INFER_REQUESTS", "COMPATIBILITY_CHECK",
};

}  // namespace

DeviceReport describe_device(ov::Core& core, const std::string& device) {
  DeviceReport report;
  for (const auto& [name, version] : core.get_versions(device))
    report.plugins.push_back({name, version.buildNumber, version.description});
  const std::vector<ov::PropertyName> supported = core.get_property(device, ov::supported_properties);
  for (const char* name : kInteresting) {
    if (std::find(supported.begin(), supported.end(), name) == supported.end()) continue;
    PropertyReading reading{name, "", ""};
    try {
      reading.value = core.get_property(device, name).as<std::string>();
    } catch (const std::exception& e) {
      reading.error = e.what();
      if (reading.error.empty()) reading.error = "the plugin gave no reason";
    }
    report.properties.push_back(std::move(reading));
  }
  return report;
}

}  // namespace weft_ov
