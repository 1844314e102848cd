#include "runner.h"

#include <chrono>
#include <cstring>
#include <stdexcept>

#include <openvino/core/type/bfloat16.hpp>
#include <openvino/core/type/float16.hpp>
#include <openvino/runtime/remote_context.hpp>
#include <openvino/runtime/remote_tensor.hpp>

#include "model_prep.h"

namespace weft_ov {
namespace {

PortInfo port_info(const ov::Output<const ov::Node>& port) {
  PortInfo info;
  info.name = port.get_any_name();
  info.type = port.get_element_type().to_string();
  for (const auto& dim : port.get_partial_shape()) info.shape.push_back(dim.is_static() ? dim.get_length() : -1);
  return info;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

template <typename T>
void fill(ov::Tensor& tensor, const StepInput& in) {
  T* dst = tensor.data<T>();
  if (in.is_float) {
    for (size_t i = 0; i < in.floats.size(); ++i) dst[i] = static_cast<T>(in.floats[i]);
  } else {
    for (size_t i = 0; i < in.ints.size(); ++i) dst[i] = static_cast<T>(in.ints[i]);
  }
}

}  // namespace

bool is_cache_input(const std::string& name) {
  return name.rfind("key_cache.", 0) == 0 || name.rfind("value_cache.", 0) == 0;
}

bool is_state_input(const std::string& name) {
  return name.rfind("conv_state_table.", 0) == 0 || name.rfind("gated_delta_state_table.", 0) == 0;
}

namespace {

void check_table_port(const ov::Output<const ov::Node>& port) {
  const auto& shape = port.get_partial_shape();
  if (shape.rank().is_dynamic() || shape.rank().get_length() < 2)
    throw std::runtime_error(port.get_any_name() + ": the compiled cache input has no usable rank");
  for (int64_t d = 1; d < shape.rank().get_length(); ++d)
    if (shape[d].is_dynamic())
      throw std::runtime_error(port.get_any_name() + ": the plugin left dimension " + std::to_string(d) +
                               " of the cache dynamic (" + shape.to_string() + ")");
  if (port.get_element_type().is_dynamic())
    throw std::runtime_error(port.get_any_name() + ": the plugin left the cache element type dynamic");
}

int64_t block_bytes(const std::vector<ov::Output<const ov::Node>>& ports) {
  int64_t total = 0;
  for (const auto& port : ports) {
    const auto& shape = port.get_partial_shape();
    int64_t elements = 1;
    for (int64_t d = 1; d < shape.rank().get_length(); ++d) elements *= shape[d].get_length();
    // bitwidth, not size(): u4 / i4 caches hold two values per byte.
    total += (elements * static_cast<int64_t>(port.get_element_type().bitwidth()) + 7) / 8;
  }
  return total;
}

// [blocks, ...] tensors for `ports`, zeroed: host tensors, or remote ones from `context`.
std::vector<ov::Tensor> make_tables(const std::vector<ov::Output<const ov::Node>>& ports, int64_t blocks, bool remote,
                                    const ov::RemoteContext& context) {
  std::vector<ov::Tensor> tensors;
  for (const auto& port : ports) {
    ov::Shape shape = port.get_partial_shape().get_min_shape();
    shape[0] = static_cast<size_t>(blocks);
    ov::Tensor host(port.get_element_type(), shape);
    std::memset(host.data(), 0, host.get_byte_size());
    if (remote) {
      ov::RemoteTensor device = const_cast<ov::RemoteContext&>(context).create_tensor(port.get_element_type(), shape);
      device.copy_from(host);
      tensors.push_back(device);
    } else {
      tensors.push_back(host);
    }
  }
  return tensors;
}

}  // namespace

std::unique_ptr<Runner> Runner::load(const LoadOptions& options) {
  std::unique_ptr<Runner> runner(new Runner());
  std::shared_ptr<ov::Model> model = runner->core_.read_model(options.xml_path);
  runner->converted_ = ensure_paged_attention(model);
  gather_logits_rows(model);
  ov::AnyMap properties;
  for (const auto& [key, value] : options.properties) properties[key] = value;
  runner->compiled_ = runner->core_.compile_model(model, options.device, properties);
  runner->device_ = options.device;
  runner->remote_cache_ = options.device.rfind("GPU", 0) == 0;
  for (const auto& port : runner->compiled_.inputs()) {
    runner->inputs_.push_back(port_info(port));
    if (is_cache_input(port.get_any_name())) runner->cache_ports_.push_back(port);
    if (is_state_input(port.get_any_name())) runner->state_ports_.push_back(port);
  }
  for (const auto& port : runner->compiled_.outputs()) runner->outputs_.push_back(port_info(port));
  if (runner->cache_ports_.empty()) throw std::runtime_error("the compiled model has no key_cache.N / value_cache.N inputs");
  for (const auto& port : runner->cache_ports_) check_table_port(port);
  for (const auto& port : runner->state_ports_) check_table_port(port);
  runner->request_ = runner->compiled_.create_infer_request();
  return runner;
}

int64_t Runner::bytes_per_block() const { return block_bytes(cache_ports_); }

int64_t Runner::state_bytes_per_block() const { return block_bytes(state_ports_); }

void Runner::allocate_cache(int64_t num_blocks, int64_t num_state_blocks) {
  if (cache_allocated_) throw std::runtime_error("the KV cache is already allocated");
  if (num_blocks < 1) throw std::runtime_error("numBlocks must be at least 1");
  if (state_ports_.empty() && num_state_blocks != 0)
    throw std::runtime_error("this model has no linear-attention state tables: it takes no state blocks");
  if (!state_ports_.empty() && num_state_blocks < 2)
    throw std::runtime_error("a model with linear-attention state tables needs at least 2 state blocks (block 0 is the zero state)");
  ov::RemoteContext context;
  if (remote_cache_) context = compiled_.get_context();
  std::vector<ov::Tensor> tensors = make_tables(cache_ports_, num_blocks, remote_cache_, context);
  std::vector<ov::Tensor> states = make_tables(state_ports_, num_state_blocks, remote_cache_, context);
  for (size_t i = 0; i < cache_ports_.size(); ++i) request_.set_tensor(cache_ports_[i], tensors[i]);
  for (size_t i = 0; i < state_ports_.size(); ++i) request_.set_tensor(state_ports_[i], states[i]);
  states_ = std::move(states);
  cache_ = std::move(tensors);
  num_blocks_ = num_blocks;
  cache_allocated_ = true;
}

void Runner::copy_blocks(const std::vector<int32_t>& pairs) {
  if (pairs.empty()) return;
  if (remote_cache_) throw std::runtime_error("block copies on a device cache are not supported");
  for (size_t p = 0; p + 1 < pairs.size(); p += 2) {
    const int64_t src = pairs[p], dst = pairs[p + 1];
    if (src < 0 || dst < 0 || src >= num_blocks_ || dst >= num_blocks_) throw std::runtime_error("block copy out of range");
    for (auto& tensor : cache_) {
      const size_t block_bytes = tensor.get_byte_size() / static_cast<size_t>(num_blocks_);
      auto* base = static_cast<uint8_t*>(tensor.data());
      std::memcpy(base + dst * block_bytes, base + src * block_bytes, block_bytes);
    }
  }
}

void Runner::step(const std::vector<StepInput>& inputs, size_t* rows, size_t* vocab) {
  if (!cache_allocated_) throw std::runtime_error("step before allocateCache");
  auto start = std::chrono::steady_clock::now();
  size_t given = 0;
  for (const auto& port : compiled_.inputs()) {
    const std::string name = port.get_any_name();
    if (is_cache_input(name) || is_state_input(name)) continue;
    const StepInput* in = nullptr;
    for (const auto& candidate : inputs)
      if (candidate.name == name) in = &candidate;
    if (!in) throw std::runtime_error("no value for the model input " + name);
    ++given;
    size_t count = 1;
    for (size_t d : in->shape) count *= d;
    if (count != (in->is_float ? in->floats.size() : in->ints.size()))
      throw std::runtime_error(name + ": " + std::to_string(count) + " elements in the shape, " +
                               std::to_string(in->is_float ? in->floats.size() : in->ints.size()) + " given");
    const ov::element::Type type = port.get_element_type();
    ov::Tensor tensor(type, ov::Shape(in->shape));
    if (type == ov::element::i64) fill<int64_t>(tensor, *in);
    else if (type == ov::element::i32) fill<int32_t>(tensor, *in);
    else if (type == ov::element::f32) fill<float>(tensor, *in);
    else if (type == ov::element::f16) fill<ov::float16>(tensor, *in);
    else if (type == ov::element::u8) fill<uint8_t>(tensor, *in);
    else if (type == ov::element::boolean) fill<char>(tensor, *in);
    else throw std::runtime_error(name + ": unsupported input element type " + type.to_string());
    request_.set_tensor(port, tensor);
  }
  if (given != inputs.size()) throw std::runtime_error("a step input names no model input");
  timings_.inputs_ms = ms_since(start);
  start = std::chrono::steady_clock::now();
  request_.infer();
  timings_.infer_ms = ms_since(start);
  logits_ = request_.get_tensor("logits");
  const ov::Shape shape = logits_.get_shape();
  if (shape.size() < 2) throw std::runtime_error("logits output of rank " + std::to_string(shape.size()));
  const ov::element::Type type = logits_.get_element_type();
  if (type != ov::element::f32 && type != ov::element::f16 && type != ov::element::bf16)
    throw std::runtime_error("logits of element type " + type.to_string());
  *vocab = shape.back();
  *rows = logits_.get_size() / (*vocab == 0 ? 1 : *vocab);
}

void Runner::read_logits(float* dst) {
  const auto start = std::chrono::steady_clock::now();
  const size_t n = logits_.get_size();
  const ov::element::Type type = logits_.get_element_type();
  if (type == ov::element::f32) {
    std::memcpy(dst, logits_.data<const float>(), n * sizeof(float));
  } else if (type == ov::element::f16) {
    const ov::float16* src = logits_.data<const ov::float16>();
    for (size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
  } else {
    const ov::bfloat16* src = logits_.data<const ov::bfloat16>();
    for (size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
  }
  timings_.logits_ms = ms_since(start);
}

}  // namespace weft_ov
