// What OpenVINO says about one device, for `weft doctor` (pure OpenVINO, no N-API).
//
// Invariant: describe_device() never throws for a property that cannot be read
// (some plugins throw on reading a property they list, e.g. the CPU plugin's
// COMPATIBILITY_CHECK): that property carries the plugin's message in `error`.
#pragma once

#include <string>
#include <vector>

#include <openvino/runtime/core.hpp>

namespace weft_ov {

struct PropertyReading {
  std::string name;
  std::string value;  // as ov::Any prints it; empty when error is set
  std::string error;  // why the plugin refused to report it
};

struct PluginVersion {
  std::string name;          // the plugin library's name, e.g. "openvino_intel_cpu_plugin"
  std::string build_number;  // e.g. "2026.4.1-..."
  std::string description;
};

struct DeviceReport {
  std::vector<PluginVersion> plugins;
  std::vector<PropertyReading> properties;  // the properties that matter to weft, those the device lists
};

// The read-only facts and the defaults of `device` ("CPU", "GPU.0", ...) that
// decide how weft runs there: name, capabilities, precisions, cache precisions, threads, memory.
DeviceReport describe_device(ov::Core& core, const std::string& device);

}  // namespace weft_ov
