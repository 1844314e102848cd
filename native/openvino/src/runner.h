// One compiled PagedAttention LLM and its KV cache (pure OpenVINO, no N-API).
//
// Invariants: the cache tensors are allocated once (allocate_cache) and bound to
// the one infer request for its lifetime; step() is never called concurrently
// (the binding rejects overlapping calls, the TypeScript side queues them).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <openvino/runtime/compiled_model.hpp>
#include <openvino/runtime/core.hpp>
#include <openvino/runtime/infer_request.hpp>
#include <openvino/runtime/tensor.hpp>

namespace weft_ov {

struct PortInfo {
  std::string name;
  std::string type;            // OpenVINO's element type name: "i64", "f32", "u8", ...
  std::vector<int64_t> shape;  // -1 for a dynamic dimension
};

struct LoadOptions {
  std::string xml_path;
  std::string device;  // "CPU", "GPU", "GPU.1", ...
  std::map<std::string, std::string> properties;
};

// A step input as the TypeScript mapping produced it: int32 or float32 values,
// converted here to the element type the compiled model declares.
struct StepInput {
  std::string name;
  bool is_float = false;
  std::vector<int32_t> ints;
  std::vector<float> floats;
  std::vector<size_t> shape;
};

// Where the last step's time went on the worker thread, in milliseconds (for
// bench/openvino/step-profile.bench.ts): converting and binding the inputs,
// infer(), and reading the logits back into float32 (read_logits).
struct StepTimings {
  double inputs_ms = 0;
  double infer_ms = 0;
  double logits_ms = 0;
};

class Runner {
 public:
  // Reads, converts (SDPA -> PagedAttention), adds the logits-rows input, compiles.
  static std::unique_ptr<Runner> load(const LoadOptions& options);

  bool converted() const { return converted_; }
  const std::string& device() const { return device_; }
  const std::vector<PortInfo>& inputs() const { return inputs_; }
  const std::vector<PortInfo>& outputs() const { return outputs_; }
  // Bytes one cache block takes over every key_cache.N and value_cache.N tensor.
  int64_t bytes_per_block() const;
  // Bytes one linear-attention state block takes over every conv_state_table.N and
  // gated_delta_state_table.N tensor (0 for a model without linear attention).
  int64_t state_bytes_per_block() const;
  bool cache_allocated() const { return cache_allocated_; }

  // Allocates [num_blocks, ...] for every cache input and [num_state_blocks, ...]
  // for every state table: host tensors on CPU, the plugin's remote (device)
  // tensors on GPU, all zero (state block 0 stays zero: it is the state a
  // sequence starts from, and no step writes it).
  void allocate_cache(int64_t num_blocks, int64_t num_state_blocks);
  // Copies cache block src to dst in every layer (host caches only).
  void copy_blocks(const std::vector<int32_t>& pairs);
  // Runs one step. Its logits stay in the request's output tensor, rows x vocab,
  // until the next step (read_logits reads them).
  void step(const std::vector<StepInput>& inputs, size_t* rows, size_t* vocab);
  // Writes the last step's rows x vocab logits into dst as float32 (the one
  // copy they take on their way to JavaScript: dst is the buffer lent there).
  void read_logits(float* dst);
  const StepTimings& last_timings() const { return timings_; }

 private:
  Runner() = default;
  ov::Core core_;
  ov::CompiledModel compiled_;
  ov::InferRequest request_;
  std::string device_;
  bool converted_ = false;
  bool cache_allocated_ = false;
  bool remote_cache_ = false;
  int64_t num_blocks_ = 0;
  std::vector<PortInfo> inputs_;
  std::vector<PortInfo> outputs_;
  std::vector<ov::Tensor> cache_;  // same order as cache_ports_
  std::vector<ov::Output<const ov::Node>> cache_ports_;
  std::vector<ov::Tensor> states_;  // same order as state_ports_
  std::vector<ov::Output<const ov::Node>> state_ports_;
  StepTimings timings_;
  ov::Tensor logits_;  // the last step's output (the request's own tensor, rewritten by the next step)
};

bool is_cache_input(const std::string& name);
// conv_state_table.N / gated_delta_state_table.N: the linear-attention state tables
// OpenVINO's paged transformation adds for Gated DeltaNet layers.
bool is_state_input(const std::string& name);

}  // namespace weft_ov
