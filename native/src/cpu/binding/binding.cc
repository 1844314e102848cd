// N-API binding of the CPU model: class CpuModel.
//
//   new CpuModel(config)                       sync; config checked here
//                                               (encoders: encoder, maxPositions, typeVocab, layerNormEps, activation,
//                                                encoderRope, gatedMlp, mlpBias)
//   loadTensor(kind, layer, path, offset, dtype, shape, map?) -> Promise<void>  (map: may use the file's mapping, default true)
//   allocateCache(numBlocks, blockSize, precision, hybrid?) -> Promise<void>
//                                                 (hybrid: {stateBlocks, checkpointBlocks, checkpointInterval}, linear_state.h)
//   execute(batch)                              -> Promise<{logits: Float32Array, argmax?: Int32Array, sampled?: {...}}>  (sampled: sample/sampler.h)
//                                                 (hybrid models: batch.extraBlockTables['linear-state'], one slot per
//                                                  sequence; ['checkpoints'] and stateFromCheckpoint with prefix caching)
//   releaseLogits(array)                        sync; hands a step's logits back for reuse (logits_transfer.h)
//   dispose()                                   idempotent; frees native memory
//   logitsBuffers                               read-only {allocated, lent}: the logits pool (test hook)
//   weightBytes                                 read-only {copied, mapped}: weight bytes held in memory / used from file mappings
//   weightSlots()                               sync; [{kind, layer, shape}] the model needs
//   threads, kernels                            read-only: pool size, kernel set name (cpu_features.h)
//
// Work runs on the libuv thread pool (PromiseJob, native/common/promise_job.h)
// and, inside it, on the model's own thread pool. One operation at a time per model: a call made while
// another is in flight is rejected (the TypeScript side queues calls, so this
// only catches misuse). Bad arguments reject; nothing here aborts the process:
// C++ exceptions (bad_alloc, system_error) become JS errors or rejections
// here, and NODE_ADDON_API_CPP_EXCEPTIONS_ALL (CMakeLists.txt) catches any
// that slip through at the N-API boundary.
#include "binding/binding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>
#include <system_error>
#include <thread>

#include "base/cpu_features.h"
#include "logits_transfer.h"
#include "kernels/argmax/argmax.h"
#include "model/model.h"
#include "promise_job.h"
#include "sample/sampler.h"

namespace weft {
namespace {

// ---- argument reading: each helper throws a Napi::Error on a bad value ----

int read_int(const Napi::Object& o, const char* name, int min, int max) {
  const Napi::Value v = o.Get(name);
  if (!v.IsNumber()) throw Napi::TypeError::New(o.Env(), std::string(name) + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= min && d <= max) || std::floor(d) != d)
    throw Napi::RangeError::New(o.Env(), std::string(name) + " must be an integer in [" + std::to_string(min) + ", " +
                                             std::to_string(max) + "]");
  return static_cast<int>(d);
}

bool read_bool(const Napi::Object& o, const char* name) {
  const Napi::Value v = o.Get(name);
  if (!v.IsBoolean()) throw Napi::TypeError::New(o.Env(), std::string(name) + " must be a boolean");
  return v.As<Napi::Boolean>().Value();
}

bool has(const Napi::Object& o, const char* name) { return o.Has(name) && !o.Get(name).IsUndefined(); }

int read_int_or(const Napi::Object& o, const char* name, int min, int max, int fallback) {
  return has(o, name) ? read_int(o, name, min, max) : fallback;
}

bool read_bool_or(const Napi::Object& o, const char* name, bool fallback) { return has(o, name) ? read_bool(o, name) : fallback; }

int64_t to_int64(Napi::Env env, const Napi::Value& v, const char* name, double min, double max) {
  if (!v.IsNumber()) throw Napi::TypeError::New(env, std::string(name) + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= min && d <= max) || std::floor(d) != d)
    throw Napi::RangeError::New(env, std::string(name) + " must be an integer in range");
  return static_cast<int64_t>(d);
}

// Copies an Int32Array property. A missing optional property gives an empty vector.
std::vector<int32_t> read_int32s(const Napi::Object& o, const char* name, bool optional = false) {
  const Napi::Value v = o.Get(name);
  if (optional && (v.IsUndefined() || v.IsNull())) return {};
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array)
    throw Napi::TypeError::New(o.Env(), std::string(name) + " must be an Int32Array");
  const Napi::Int32Array a = v.As<Napi::Int32Array>();
  return std::vector<int32_t>(a.Data(), a.Data() + a.ElementLength());
}

// Copies an optional Uint8Array property (missing: an empty vector).
std::vector<uint8_t> read_optional_uint8s(const Napi::Object& o, const char* name) {
  const Napi::Value v = o.Get(name);
  if (v.IsUndefined() || v.IsNull()) return {};
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    throw Napi::TypeError::New(o.Env(), std::string(name) + " must be a Uint8Array");
  const Napi::Uint8Array a = v.As<Napi::Uint8Array>();
  return std::vector<uint8_t>(a.Data(), a.Data() + a.ElementLength());
}

// A hybrid model's fields (config.h), all optional: linearLayers (a Uint8Array
// with one entry per layer, nonzero for a Gated DeltaNet layer) and the shape of
// those layers; attnOutputGate and normPlusOne. The bounds below are the ones
// linear_attention.cc's fixed buffers rely on.
void read_hybrid_config(const Napi::Object& o, ModelConfig& c) {
  Napi::Env env = o.Env();
  c.attn_output_gate = read_bool_or(o, "attnOutputGate", false);
  c.norm_plus_one = read_bool_or(o, "normPlusOne", false);
  const std::vector<uint8_t> linear = read_optional_uint8s(o, "linearLayers");
  if (linear.empty()) return;
  if (linear.size() != static_cast<size_t>(c.layers))
    throw Napi::RangeError::New(env, "linearLayers must have one entry per layer (" + std::to_string(c.layers) + ")");
  c.linear_layer.assign(linear.begin(), linear.end());
  for (size_t l = 0; l < linear.size(); ++l) c.linear_layer[l] = linear[l] != 0;
  if (c.linear_layers() == 0) {
    c.linear_layer.clear();
    return;
  }
  c.lin_key_heads = read_int(o, "linKeyHeads", 1, 4096);
  c.lin_value_heads = read_int(o, "linValueHeads", 1, 4096);
  c.lin_key_dim = read_int(o, "linKeyDim", 1, 4096);
  c.lin_value_dim = read_int(o, "linValueDim", 1, 512);
  c.conv_kernel = read_int(o, "convKernel", 1, 16);
  if (c.lin_value_heads % c.lin_key_heads != 0) throw Napi::RangeError::New(env, "linValueHeads must be a multiple of linKeyHeads");
  c.fused_linear_proj = read_bool_or(o, "fusedLinearProj", false);
}

// A mixture-of-experts model's fields (Qwen3-Next): which layers route, and how.
void read_moe_config(const Napi::Object& o, ModelConfig& c) {
  Napi::Env env = o.Env();
  const std::vector<uint8_t> moe = read_optional_uint8s(o, "moeLayers");
  if (moe.empty()) return;
  if (moe.size() != static_cast<size_t>(c.layers))
    throw Napi::RangeError::New(env, "moeLayers must have one entry per layer (" + std::to_string(c.layers) + ")");
  c.moe_layer.assign(moe.size(), false);
  for (size_t l = 0; l < moe.size(); ++l) c.moe_layer[l] = moe[l] != 0;
  if (!c.has_moe()) {
    c.moe_layer.clear();
    return;
  }
  c.experts = read_int(o, "experts", 1, 65536);
  c.experts_per_token = read_int(o, "expertsPerToken", 1, c.experts);
  c.expert_intermediate = read_int(o, "expertIntermediate", 1, 1 << 20);
  c.shared_intermediate = read_int_or(o, "sharedIntermediate", 0, 1 << 20, 0);
  c.norm_topk_prob = read_bool_or(o, "normTopkProb", false);
}

// An encoder's fields (config.h), all absent for decoders: encoder (true),
// maxPositions, typeVocab, layerNormEps, activation ('gelu' exact erf,
// 'gelu_tanh', or 'silu' with gatedMlp), and NomicBert's encoderRope,
// gatedMlp and mlpBias (default false, false, true).
void read_encoder_config(const Napi::Object& o, ModelConfig& c) {
  Napi::Env env = o.Env();
  c.encoder = read_bool_or(o, "encoder", false);
  if (!c.encoder) return;
  c.max_positions = read_int(o, "maxPositions", 1, 1 << 20);
  c.type_vocab = read_int(o, "typeVocab", 1, 1 << 16);
  const Napi::Value eps = o.Get("layerNormEps");
  if (!eps.IsNumber() || !(eps.As<Napi::Number>().DoubleValue() > 0) || !std::isfinite(eps.As<Napi::Number>().DoubleValue()))
    throw Napi::RangeError::New(env, "layerNormEps must be a positive number");
  c.layer_norm_eps = eps.As<Napi::Number>().FloatValue();
  c.encoder_rope = read_bool_or(o, "encoderRope", false);
  c.gated_mlp = read_bool_or(o, "gatedMlp", false);
  c.mlp_bias = read_bool_or(o, "mlpBias", true);
  const Napi::Value act = o.Get("activation");
  const std::string a = act.IsString() ? act.As<Napi::String>().Utf8Value() : "";
  if (c.gated_mlp) {
    if (a != "silu") throw Napi::RangeError::New(env, "a gated encoder MLP (gatedMlp) takes activation 'silu'");
  } else if (a == "gelu") c.activation = ModelConfig::Activation::GeluErf;
  else if (a == "gelu_tanh") c.activation = ModelConfig::Activation::GeluTanh;
  else throw Napi::RangeError::New(env, "activation must be 'gelu' or 'gelu_tanh' for an encoder ('silu' with gatedMlp)");
  if (c.kv_heads != c.heads) throw Napi::RangeError::New(env, "an encoder has as many kvHeads as heads");
  if (!c.linear_layer.empty() || !c.moe_layer.empty()) throw Napi::RangeError::New(env, "an encoder has no linear-attention or expert layers");
}

// One extra pool's block tables from batch.extraBlockTables (src/backends/backend.ts):
// {indices, begins} as Int32Arrays; absent: both empty.
void read_extra_tables(const Napi::Object& batch, const char* pool, std::vector<int32_t>& indices, std::vector<int32_t>& begins) {
  Napi::Env env = batch.Env();
  const Napi::Value tables = batch.Get("extraBlockTables");
  if (tables.IsUndefined() || tables.IsNull()) return;
  if (!tables.IsObject()) throw Napi::TypeError::New(env, "extraBlockTables must be an object");
  const Napi::Value t = tables.As<Napi::Object>().Get(pool);
  if (t.IsUndefined() || t.IsNull()) return;
  if (!t.IsObject()) throw Napi::TypeError::New(env, std::string("extraBlockTables['") + pool + "'] must be {indices, begins}");
  indices = read_int32s(t.As<Napi::Object>(), "indices");
  begins = read_int32s(t.As<Napi::Object>(), "begins");
}

// A hybrid model's state slots: one block per sequence of the 'linear-state'
// tables, flattened as [B] (its begins must be 0, 1, ..., B).
std::vector<int32_t> read_state_slots(const Napi::Object& batch) {
  std::vector<int32_t> indices, begins;
  read_extra_tables(batch, "linear-state", indices, begins);
  for (size_t i = 0; i < begins.size(); ++i)
    if (begins[i] != static_cast<int32_t>(i))
      throw Napi::RangeError::New(batch.Env(), "extraBlockTables['linear-state'] must give each sequence exactly one block");
  if (!begins.empty() && begins.size() != indices.size() + 1)
    throw Napi::RangeError::New(batch.Env(), "extraBlockTables['linear-state'].begins must have indices.length + 1 entries");
  return indices;
}

// batch.sampling (StepBatch.sampling), copied; absent: an empty input. Its
// masks and masksReady are read in place, while the step runs: `keep` holds
// references to them until the job is done.
SamplingInput read_sampling(const Napi::Object& b, int32_t vocab, std::vector<Napi::Reference<Napi::Value>>& keep) {
  SamplingInput in;
  const Napi::Value v = b.Get("sampling");
  if (v.IsUndefined() || v.IsNull()) return in;
  if (!v.IsObject()) throw Napi::TypeError::New(b.Env(), "sampling must be an object");
  const Napi::Object o = v.As<Napi::Object>();
  in.rows = read_optional_uint8s(o, "rows");
  const Napi::Value params = o.Get("params");
  if (!params.IsTypedArray() || params.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array)
    throw Napi::TypeError::New(b.Env(), "sampling.params must be a Float64Array");
  const Napi::Float64Array p = params.As<Napi::Float64Array>();
  in.params.assign(p.Data(), p.Data() + p.ElementLength());
  in.seen = read_int32s(o, "seen");
  in.seen_begins = read_int32s(o, "seenBegins");
  in.counted = read_int32s(o, "counted");
  in.counts = read_int32s(o, "counts");
  in.counted_begins = read_int32s(o, "countedBegins");
  if (in.rows.empty()) throw Napi::TypeError::New(b.Env(), "sampling.rows must be a Uint8Array of logitsIndices.length entries");
  const Napi::Value masks = o.Get("masks");
  if (!masks.IsUndefined() && !masks.IsNull()) {
    if (!masks.IsArray()) throw Napi::TypeError::New(b.Env(), "sampling.masks must be an array");
    const Napi::Array list = masks.As<Napi::Array>();
    const size_t words = (static_cast<size_t>(vocab) + 31) / 32;
    for (uint32_t i = 0; i < list.Length(); ++i) {
      const Napi::Value m = list.Get(i);
      if (m.IsUndefined() || m.IsNull()) {
        in.masks.push_back(nullptr);
        continue;
      }
      if (!m.IsTypedArray() || m.As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array ||
          m.As<Napi::Uint32Array>().ElementLength() < words)
        throw Napi::TypeError::New(b.Env(), "sampling.masks entries must be Uint32Arrays of (vocab + 31) / 32 words, or null");
      in.masks.push_back(m.As<Napi::Uint32Array>().Data());
      keep.push_back(Napi::Persistent(m));
    }
    const Napi::Value ready = o.Get("masksReady");
    if (!ready.IsTypedArray() || ready.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array || ready.As<Napi::Int32Array>().ElementLength() < 1)
      throw Napi::TypeError::New(b.Env(), "sampling.masksReady must be an Int32Array (on a SharedArrayBuffer)");
    in.masks_ready = ready.As<Napi::Int32Array>().Data();
    keep.push_back(Napi::Persistent(ready));
  }
  return in;
}

// The jobs of a model (promise_job.h), named "weft:cpu" for async_hooks.
class Job : public PromiseJob {
 public:
  Job(Napi::Env env, Napi::Object owner, bool* busy) : PromiseJob(env, "weft:cpu", owner, busy) {}
};

class LoadJob : public Job {
 public:
  LoadJob(Napi::Env env, Napi::Object owner, bool* busy, WeightArena* arena, Tensor* slot, std::string path, uint64_t offset, std::string dtype,
          std::vector<int64_t> shape, WeightType quantize_to, ThreadPool* pool, MappedFiles* mapped_files, bool plus_one)
      : Job(env, owner, busy), arena_(arena), slot_(slot), path_(std::move(path)), offset_(offset), dtype_(std::move(dtype)),
        shape_(std::move(shape)), quantize_to_(quantize_to), pool_(pool), mapped_files_(mapped_files), plus_one_(plus_one) {}
  void Execute() override {
    guarded([&] {
      std::string error = load_weight(*arena_, *slot_, path_, offset_, dtype_, shape_, quantize_to_, *pool_, mapped_files_);
      // A zero-centred norm applied as (1 + w) (SlotSpec::centred): stored once as 1 + w, in float32 like every vector.
      if (error.empty() && plus_one_)
        for (float& w : slot_->data) w += 1.0f;
      return error;
    });
  }

 private:
  WeightArena* arena_;  // the model's, which slot_ belongs to
  Tensor* slot_;
  std::string path_;
  uint64_t offset_;
  std::string dtype_;
  std::vector<int64_t> shape_;
  WeightType quantize_to_;
  ThreadPool* pool_;
  MappedFiles* mapped_files_;  // nullptr: read, never map
  bool plus_one_;              // add 1 to every element once loaded
};

class CacheJob : public Job {
 public:
  CacheJob(Napi::Env env, Napi::Object owner, bool* busy, Model* model, int blocks, int block_size, KvPrecision p, int state_slots,
           int checkpoint_slots, int checkpoint_interval)
      : Job(env, owner, busy), model_(model), blocks_(blocks), block_size_(block_size), state_slots_(state_slots),
        checkpoint_slots_(checkpoint_slots), checkpoint_interval_(checkpoint_interval), precision_(p) {}
  void Execute() override {
    guarded([&] {
      const ModelConfig& c = model_->config;
      if (c.linear_layers() > 0 && state_slots_ < 2)
        return std::string("a hybrid model needs at least 2 linear-state blocks (block 0 is the null block)");
      // The states first: the KV cache's memory check then counts them.
      const double weights = weight_bytes(model_->weights);
      std::string error = allocate_linear_state(model_->linear, c, state_slots_, weights);
      if (error.empty()) error = allocate_linear_state(model_->checkpoints, c, checkpoint_slots_, weights + linear_state_slot_bytes(c) * state_slots_);
      if (!error.empty()) return error;
      model_->checkpoint_interval = checkpoint_interval_;
      return allocate_cache(model_->cache, c.attention_layers(), c.kv_heads, c.head_dim, blocks_, block_size_, precision_,
                            weights + linear_state_slot_bytes(c) * (state_slots_ + checkpoint_slots_));
    });
  }

 private:
  Model* model_;
  int blocks_, block_size_, state_slots_, checkpoint_slots_, checkpoint_interval_;
  KvPrecision precision_;
};

class StepJob : public Job {
 public:
  StepJob(Napi::Env env, Napi::Object owner, bool* busy, Model* model, StepInput step, std::shared_ptr<LogitsBuffers> buffers,
          bool copy_logits, SamplingInput sampling, std::shared_ptr<SamplerScratchPool> scratch,
          std::vector<Napi::Reference<Napi::Value>> keep)
      : Job(env, owner, busy), model_(model), step_(std::move(step)), buffers_(std::move(buffers)), copy_logits_(copy_logits),
        sampling_(std::move(sampling)), scratch_(std::move(scratch)), keep_(std::move(keep)) {}
  void Execute() override {
    guarded([&] {
      std::string error = validate_step(*model_, step_);
      if (error.empty() && !sampling_.empty()) error = validate_sampling(sampling_, step_.logits_indices.size(), model_->config.vocab);
      if (!error.empty()) return error;
      floats_ = step_.logits_indices.size() * static_cast<size_t>(model_->config.vocab);
      // Not zero-filled: the LM head writes every value of the rows it is asked for.
      logits_ = buffers_->take(floats_);
      hidden_.resize(step_.hidden_indices.size() * static_cast<size_t>(model_->config.hidden));
      forward(*model_, step_, logits_.data.get(), hidden_.data());
      pick_argmax();
      // The sampling chain over the rows it asks for, while the logits are in cache (sample/sampler.h).
      if (!sampling_.empty())
        sample_rows(sampling_, logits_.data.get(), step_.logits_indices.size(), model_->config.vocab, *model_->pool, *scratch_, sampled_);
      return std::string();
    });
  }

 protected:
  // {logits, argmax?}: the StepResult of src/backends/backend.ts.
  Napi::Value result(Napi::Env env) override {
    Napi::Object out = Napi::Object::New(env);
    out.Set("logits", buffers_->to_js(env, std::move(logits_), floats_, copy_logits_));
    if (!argmax_.empty()) {
      Napi::Int32Array argmax = Napi::Int32Array::New(env, argmax_.size());
      std::copy(argmax_.begin(), argmax_.end(), argmax.Data());
      out.Set("argmax", argmax);
    }
    if (!sampling_.empty()) out.Set("sampled", sampled_result(env));
    if (!step_.hidden_indices.empty()) {
      Napi::Float32Array hidden = Napi::Float32Array::New(env, hidden_.size());
      std::copy(hidden_.begin(), hidden_.end(), hidden.Data());
      out.Set("hidden", hidden);
    }
    return out;
  }

 private:
  Model* model_;
  StepInput step_;
  std::shared_ptr<LogitsBuffers> buffers_;
  bool copy_logits_;
  LogitsBuffers::Buffer logits_;
  size_t floats_ = 0;
  std::vector<int32_t> argmax_;  // [R] when argmaxRows was given: each asked row's argmax, -1 elsewhere
  std::vector<float> hidden_;    // [E][hidden]: the final hidden states hiddenIndices asked for
  SamplingInput sampling_;       // batch.sampling; empty when absent
  std::shared_ptr<SamplerScratchPool> scratch_;
  SamplingOutput sampled_;
  std::vector<Napi::Reference<Napi::Value>> keep_;  // the masks and masksReady sampling_ points into (released on the JS thread, with the job)

  // {tokens, flags, stats, top, topWidth}: StepResult.sampled.
  Napi::Object sampled_result(Napi::Env env) {
    Napi::Object s = Napi::Object::New(env);
    Napi::Int32Array tokens = Napi::Int32Array::New(env, sampled_.tokens.size());
    std::copy(sampled_.tokens.begin(), sampled_.tokens.end(), tokens.Data());
    Napi::Uint8Array flags = Napi::Uint8Array::New(env, sampled_.flags.size());
    std::copy(sampled_.flags.begin(), sampled_.flags.end(), flags.Data());
    Napi::Float64Array stats = Napi::Float64Array::New(env, sampled_.stats.size());
    std::copy(sampled_.stats.begin(), sampled_.stats.end(), stats.Data());
    Napi::Int32Array top = Napi::Int32Array::New(env, sampled_.top.size());
    std::copy(sampled_.top.begin(), sampled_.top.end(), top.Data());
    s.Set("tokens", tokens);
    s.Set("flags", flags);
    s.Set("stats", stats);
    s.Set("top", top);
    s.Set("topWidth", Napi::Number::New(env, sampled_.top_width));
    return s;
  }

  // Greedy picks (argmax.h), a row per item over the model's threads, while
  // the logits are still in their caches: the main thread scanned a row of
  // 151,936 floats in ~0.3 ms.
  void pick_argmax() {
    if (step_.argmax_rows.empty()) return;
    const size_t V = static_cast<size_t>(model_->config.vocab);
    const ArgmaxFn argmax = argmax_kernel();
    argmax_.assign(step_.argmax_rows.size(), -1);
    model_->pool->parallel_for(argmax_.size(), 1, [&](size_t begin, size_t end, int) {
      for (size_t r = begin; r < end; ++r)
        if (step_.argmax_rows[r] != 0) argmax_[r] = argmax(logits_.data.get() + r * V, static_cast<int32_t>(V));
    });
  }
};

class CpuModel : public Napi::ObjectWrap<CpuModel> {
 public:
  static Napi::Function define(Napi::Env env) {
    return DefineClass(env, "CpuModel",
                       {InstanceMethod("loadTensor", &CpuModel::load_tensor),
                        InstanceMethod("allocateCache", &CpuModel::allocate_cache_method),
                        InstanceMethod("execute", &CpuModel::execute),
                        InstanceMethod("releaseLogits", &CpuModel::release_logits),
                        InstanceAccessor("logitsBuffers", &CpuModel::logits_buffers, nullptr),
                        InstanceAccessor("weightBytes", &CpuModel::weight_bytes_method, nullptr),
                        InstanceMethod("dispose", &CpuModel::dispose),
                        InstanceMethod("weightSlots", &CpuModel::weight_slots),
                        InstanceAccessor("threads", &CpuModel::threads, nullptr),
                        InstanceAccessor("kernels", &CpuModel::kernels, nullptr)});
  }

  explicit CpuModel(const Napi::CallbackInfo& info) : Napi::ObjectWrap<CpuModel>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsObject()) throw Napi::TypeError::New(env, "CpuModel(config): config must be an object");
    // WEFT_CPU_KERNELS=amx asks for AMX: refuse rather than run without it.
    // (code AMX_UNAVAILABLE: cpu-backend.ts makes it a NativeBackendUnavailableError.)
    if (cpu_amx_forced() && !cpu_uses_amx()) {
      Napi::Error e = Napi::Error::New(env, "WEFT_CPU_KERNELS=amx, but the AMX kernels cannot run here: " + cpu_amx_status().reason);
      e.Set("code", Napi::String::New(env, "AMX_UNAVAILABLE"));
      throw e;
    }
    const Napi::Object o = info[0].As<Napi::Object>();
    auto model = std::make_unique<Model>();
    ModelConfig& c = model->config;
    // Bounds keep every size product below 2^63 (see allocate_cache, init_weight_slots).
    c.hidden = read_int(o, "hidden", 1, 1 << 18);
    c.layers = read_int(o, "layers", 1, 4096);
    c.heads = read_int(o, "heads", 1, 4096);
    c.kv_heads = read_int(o, "kvHeads", 1, 4096);
    c.head_dim = read_int(o, "headDim", 2, 1 << 14);
    c.intermediate = read_int(o, "intermediate", 1, 1 << 20);
    c.vocab = read_int(o, "vocab", 1, 1 << 24);
    c.sliding_window = read_int(o, "slidingWindow", 0, 1 << 30);
    if (c.head_dim % 2 != 0) throw Napi::RangeError::New(env, "headDim must be even (RoPE rotates pairs)");
    if (c.heads % c.kv_heads != 0) throw Napi::RangeError::New(env, "heads must be a multiple of kvHeads");
    const Napi::Value eps = o.Get("rmsEps");
    if (!eps.IsNumber() || !(eps.As<Napi::Number>().DoubleValue() > 0) || !std::isfinite(eps.As<Napi::Number>().DoubleValue()))
      throw Napi::RangeError::New(env, "rmsEps must be a positive number");
    c.rms_eps = eps.As<Napi::Number>().FloatValue();
    c.qkv_bias = read_bool(o, "qkvBias");
    c.o_bias = read_bool(o, "oBias");
    c.qk_norm = read_bool(o, "qkNorm");
    c.tied_embeddings = read_bool(o, "tiedEmbeddings");
    c.rotary_dim = read_int_or(o, "rotaryDim", 2, c.head_dim, c.head_dim);
    if (c.rotary_dim % 2 != 0) throw Napi::RangeError::New(env, "rotaryDim must be even (RoPE rotates pairs)");
    const Napi::Value freq = o.Get("invFreq");
    if (!freq.IsTypedArray() || freq.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array ||
        freq.As<Napi::Float64Array>().ElementLength() != static_cast<size_t>(c.rotary_dim / 2))
      throw Napi::TypeError::New(env, "invFreq must be a Float64Array of rotaryDim / 2 entries (headDim / 2 without rotaryDim)");
    read_hybrid_config(o, c);
    read_moe_config(o, c);
    read_encoder_config(o, c);
    const Napi::Value quantize = o.Get("quantize");
    if (!quantize.IsUndefined()) {
      const std::string q = quantize.IsString() ? quantize.As<Napi::String>().Utf8Value() : "";
      if (q == "q8_0") c.quantize_to = WeightType::Q8_0;
      else if (q == "q4_0") c.quantize_to = WeightType::Q4_0;
      else throw Napi::RangeError::New(env, "quantize must be 'q8_0' or 'q4_0' (or undefined: keep the weights as stored)");
    }
    // Test and benchmark hook: always copy the logits, as where external buffers are refused.
    const Napi::Value copy_logits = o.Get("copyLogits");
    if (!copy_logits.IsUndefined()) copy_logits_ = read_bool(o, "copyLogits");
    const Napi::Float64Array f = freq.As<Napi::Float64Array>();
    c.inv_freq.assign(f.Data(), f.Data() + f.ElementLength());
    unsigned threads = std::thread::hardware_concurrency();
    if (o.Has("threads") && !o.Get("threads").IsUndefined()) threads = read_int(o, "threads", 1, 1024);
    try {
      model->pool = std::make_unique<ThreadPool>(threads == 0 ? 1 : static_cast<int>(threads));
      init_weight_slots(model->weights, model->config);
    } catch (const std::system_error& e) {
      throw Napi::Error::New(env, "cannot start " + std::to_string(threads) + " threads: " + e.what());
    } catch (const std::exception& e) {
      throw native_error(env, e);
    }
    model_ = std::move(model);
  }

 private:
  // Throws (a rejection, through settle_errors) when the model is disposed or busy.
  void require_available(Napi::Env env) {
    if (!model_) throw Napi::Error::New(env, "the model has been disposed");
    if (busy_)
      throw Napi::Error::New(env, "another operation is still running on this model: one step at a time, await the "
                                  "previous call first");
  }

  // Queues a job and returns its promise (PromiseJob::queue: if queueing
  // fails, the model is free again and the error rejects the caller's promise).
  Napi::Value queue(Job* job) { return job->queue(); }

  // Every method first copies all its JS arguments (reading them may run user
  // getters, which may dispose the model or start another operation), then
  // checks that the model is available, and only then touches model_.
  Napi::Value load_tensor(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return settle_errors(env, [&]() -> Napi::Value {
      require_available(env);
      if (info.Length() < 6 || !info[0].IsString() || !info[2].IsString() || !info[4].IsString() || !info[5].IsArray())
        throw Napi::TypeError::New(env, "loadTensor(kind, layer, path, offset, dtype, shape)");
      const std::string kind = info[0].As<Napi::String>();
      const int layer = static_cast<int>(to_int64(env, info[1], "layer", -1, 1 << 20));
      const std::string path = info[2].As<Napi::String>();
      const uint64_t offset = static_cast<uint64_t>(to_int64(env, info[3], "offset", 0, 9007199254740991.0));
      const std::string dtype = info[4].As<Napi::String>();
      const Napi::Array dims = info[5].As<Napi::Array>();
      const uint32_t rank = dims.Length();
      if (rank > 8) throw Napi::RangeError::New(env, "shape has too many dimensions");
      std::vector<int64_t> shape;
      for (uint32_t i = 0; i < rank; ++i)
        shape.push_back(to_int64(env, dims.Get(i), "shape entry", 0, 9007199254740991.0));
      bool map = true;
      if (info.Length() > 6 && !info[6].IsUndefined()) {
        if (!info[6].IsBoolean()) throw Napi::TypeError::New(env, "loadTensor: map must be a boolean");
        map = info[6].As<Napi::Boolean>().Value();
      }
      require_available(env);
      Tensor* slot = find_weight_slot(model_->weights, kind, layer);
      if (!slot) throw Napi::Error::New(env, "the model has no weight " + kind + (layer >= 0 ? " in layer " + std::to_string(layer) : ""));
      weights_ready_ = false;
      return queue(new LoadJob(env, info.This().As<Napi::Object>(), &busy_, &model_->weights.arena, slot, path, offset, dtype, std::move(shape),
                               slot->spec->keep_float ? WeightType::F32 : model_->config.quantize_to, model_->pool.get(), map ? &model_->mapped_files : nullptr,
                               model_->config.norm_plus_one && slot->spec->centred));
    });
  }

  Napi::Value allocate_cache_method(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return settle_errors(env, [&]() -> Napi::Value {
      require_available(env);
      if (info.Length() < 3 || !info[2].IsString())
        throw Napi::TypeError::New(env, "allocateCache(numBlocks, blockSize, precision, hybrid?)");
      const int blocks = static_cast<int>(to_int64(env, info[0], "numBlocks", 0, 2147483647.0));
      const int block_size = static_cast<int>(to_int64(env, info[1], "blockSize", 0, 2147483647.0));
      int state_slots = 0, checkpoint_slots = 0, checkpoint_interval = 1;
      if (info.Length() > 3 && !info[3].IsUndefined()) {
        if (!info[3].IsObject()) throw Napi::TypeError::New(env, "allocateCache: hybrid must be {stateBlocks, checkpointBlocks, checkpointInterval}");
        const Napi::Object h = info[3].As<Napi::Object>();
        state_slots = read_int(h, "stateBlocks", 0, 1 << 20);
        checkpoint_slots = read_int(h, "checkpointBlocks", 0, 1 << 20);
        checkpoint_interval = read_int(h, "checkpointInterval", 1, 1 << 20);
      }
      const std::string p = info[2].As<Napi::String>();
      KvPrecision precision;
      if (p == "f32") precision = KvPrecision::F32;
      else if (p == "f16") precision = KvPrecision::F16;
      else if (p == "u8") precision = KvPrecision::U8;
      else throw Napi::RangeError::New(env, "KV cache precision " + p + " is not supported (f32, f16, u8)");
      require_available(env);
      return queue(new CacheJob(env, info.This().As<Napi::Object>(), &busy_, model_.get(), blocks, block_size, precision, state_slots,
                                  checkpoint_slots, checkpoint_interval));
    });
  }

  Napi::Value execute(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return settle_errors(env, [&]() -> Napi::Value {
      require_available(env);
      if (info.Length() < 1 || !info[0].IsObject()) throw Napi::TypeError::New(env, "execute(batch): batch must be an object");
      const Napi::Object b = info[0].As<Napi::Object>();
      StepInput step;
      step.input_ids = read_int32s(b, "inputIds");
      step.positions = read_int32s(b, "positions");
      step.token_type_ids = read_int32s(b, "tokenTypeIds", true);
      step.past_lens = read_int32s(b, "pastLens");
      step.subsequence_begins = read_int32s(b, "subsequenceBegins");
      step.block_indices = read_int32s(b, "blockIndices");
      step.block_indices_begins = read_int32s(b, "blockIndicesBegins");
      step.logits_indices = read_int32s(b, "logitsIndices");
      step.block_copies = read_int32s(b, "blockCopies", true);
      step.argmax_rows = read_optional_uint8s(b, "argmaxRows");
      step.hidden_indices = read_int32s(b, "hiddenIndices", true);
      step.state_slots = read_state_slots(b);
      read_extra_tables(b, "checkpoints", step.checkpoint_indices, step.checkpoint_begins);
      step.from_checkpoint = read_optional_uint8s(b, "stateFromCheckpoint");
      std::vector<Napi::Reference<Napi::Value>> keep;
      require_available(env);
      SamplingInput sampling = read_sampling(b, model_->config.vocab, keep);
      step.max_context_len = to_int64(env, b.Get("maxContextLen"), "maxContextLen", 0, 2147483647.0);
      require_available(env);
      if (!weights_ready_) {
        const std::string missing = missing_weights(model_->weights);
        if (!missing.empty()) throw Napi::Error::New(env, "weights not loaded: " + missing);
        weights_ready_ = true;
      }
      return queue(
          new StepJob(env, info.This().As<Napi::Object>(), &busy_, model_.get(), std::move(step), logits_buffers_, copy_logits_,
                      std::move(sampling), sampler_scratch_, std::move(keep)));
    });
  }

  // The caller is done with a step's logits: detach them so the memory is
  // reused by the next step (a no-op, false, for an array this model did not lend).
  Napi::Value release_logits(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1) throw Napi::TypeError::New(env, "releaseLogits(logits)");
    return Napi::Boolean::New(env, logits_buffers_->release(env, info[0]));
  }

  Napi::Value weight_bytes_method(const Napi::CallbackInfo& info) {
    double mapped = 0, total = 0, sextets = 0;
    if (model_)
      for_each_slot(model_->weights, [&](const SlotSpec&, int, const Tensor& t) {
        mapped += static_cast<double>(t.mapped_bytes);
        total += t.bytes();
        if (t.sextets) sextets += t.bytes();
      });
    Napi::Object out = Napi::Object::New(info.Env());
    out.Set("copied", Napi::Number::New(info.Env(), total - mapped));
    out.Set("mapped", Napi::Number::New(info.Env(), mapped));
    out.Set("hugePages", Napi::Boolean::New(info.Env(), model_ && model_->weights.arena.huge_pages()));
    out.Set("sextets", Napi::Number::New(info.Env(), sextets));
    return out;
  }

  Napi::Value logits_buffers(const Napi::CallbackInfo& info) {
    Napi::Object out = Napi::Object::New(info.Env());
    out.Set("allocated", Napi::Number::New(info.Env(), static_cast<double>(logits_buffers_->allocated())));
    out.Set("lent", Napi::Number::New(info.Env(), static_cast<double>(logits_buffers_->lent())));
    return out;
  }

  // Frees the weights and the cache. While a job runs the memory is in use, so
  // dispose is refused then (the TypeScript side waits for its queue to drain).
  Napi::Value dispose(const Napi::CallbackInfo& info) {
    if (busy_) throw Napi::Error::New(info.Env(), "cannot dispose while an operation is running");
    model_.reset();
    return info.Env().Undefined();
  }

  Napi::Value threads(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), model_ ? model_->pool->size() : 0);
  }

  // Which kernel set this process runs (cpu_features.h): "baseline", "avx2", ...,
  // "amx" for avx512vnni plus the AMX tiles.
  Napi::Value kernels(const Napi::CallbackInfo& info) {
    return Napi::String::New(info.Env(), cpu_uses_amx() ? "amx" : kernel_set_name(cpu_kernel_set()));
  }

  // The slots this model needs, from the slot table (weights.cc): what the
  // TypeScript side plans its loads from. shape is [rows] for vectors.
  Napi::Value weight_slots(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!model_) throw Napi::Error::New(env, "the model has been disposed");
    Napi::Array out = Napi::Array::New(env);
    uint32_t n = 0;
    for_each_slot(model_->weights, [&](const SlotSpec&, int layer, const Tensor& t) {
      if (!t.required) return;
      Napi::Object slot = Napi::Object::New(env);
      slot.Set("kind", slot_kind(t));
      slot.Set("layer", layer);
      Napi::Array shape = Napi::Array::New(env);
      shape.Set(0u, Napi::Number::New(env, static_cast<double>(t.rows)));
      if (!t.vector) shape.Set(1u, Napi::Number::New(env, static_cast<double>(t.cols)));
      slot.Set("shape", shape);
      out.Set(n++, slot);
    });
    return out;
  }

  std::unique_ptr<Model> model_;
  // Outlives the model: buffers lent to JavaScript return to it when released or collected.
  std::shared_ptr<LogitsBuffers> logits_buffers_ = std::make_shared<LogitsBuffers>();
  std::shared_ptr<SamplerScratchPool> sampler_scratch_ = std::make_shared<SamplerScratchPool>();  // the sampler's per-thread buffers, kept across steps
  bool copy_logits_ = false;
  bool busy_ = false;  // touched on the JS thread only (set on queue, cleared in OnOK/OnError)
  bool weights_ready_ = false;
};

}  // namespace

void register_cpu_model(Napi::Env env, Napi::Object exports) {
  exports.Set("CpuModel", CpuModel::define(env));
  exports.Set("transparentHugePages", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
                return Napi::Boolean::New(info.Env(), transparent_huge_pages_available());
              }));
}

}  // namespace weft
