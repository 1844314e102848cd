// Weight slots and loading tensors from safetensors files into float32.
//
// The TypeScript side parses and validates the safetensors headers (names,
// dtypes, shapes, offsets) and then asks for each tensor by file and byte
// offset. The bytes go straight from the file into native memory, chunk by
// chunk, so the JS heap never holds weights. This file checks again what it
// relies on: the shape matches the slot, and the byte range lies inside the file.
#include <algorithm>
#include <cstring>
#include <fstream>
#include <new>
#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

#include "half.h"
#include "model.h"

namespace weft {

// A matrix [rows, cols]; define_vector makes a [rows] vector (stored as cols == 1).
static void define(Tensor& t, int64_t rows, int64_t cols, bool required, bool vector = false) {
  t.rows = rows;
  t.cols = cols;
  t.vector = vector;
  t.required = required;
  t.loaded = false;
  t.data.clear();
  t.half.clear();
  t.type = WeightType::F32;
}
static void define_vector(Tensor& t, int64_t rows, bool required) { define(t, rows, 1, required, true); }

void init_weight_slots(Model& model) {
  const ModelConfig& c = model.config;
  Weights& w = model.weights;
  const int64_t q_dim = static_cast<int64_t>(c.heads) * c.head_dim;
  const int64_t kv_dim = static_cast<int64_t>(c.kv_heads) * c.head_dim;
  define(w.embed, c.vocab, c.hidden, true);
  define_vector(w.final_norm, c.hidden, true);
  define(w.lm_head, c.vocab, c.hidden, !c.tied_embeddings);
  w.layers.assign(c.layers, LayerWeights{});
  for (LayerWeights& l : w.layers) {
    define_vector(l.attn_norm, c.hidden, true);
    define(l.wq, q_dim, c.hidden, true);
    define(l.wk, kv_dim, c.hidden, true);
    define(l.wv, kv_dim, c.hidden, true);
    define(l.wo, c.hidden, q_dim, true);
    define_vector(l.bq, q_dim, c.qkv_bias);
    define_vector(l.bk, kv_dim, c.qkv_bias);
    define_vector(l.bv, kv_dim, c.qkv_bias);
    define_vector(l.bo, c.hidden, c.o_bias);
    define_vector(l.q_norm, c.head_dim, c.qk_norm);
    define_vector(l.k_norm, c.head_dim, c.qk_norm);
    define_vector(l.ffn_norm, c.hidden, true);
    define(l.w_gate, c.intermediate, c.hidden, true);
    define(l.w_up, c.intermediate, c.hidden, true);
    define(l.w_down, c.hidden, c.intermediate, true);
  }
}

Tensor* find_weight_slot(Model& model, const std::string& kind, int layer) {
  Weights& w = model.weights;
  Tensor* t = nullptr;
  if (layer < 0) {
    if (kind == "embed_tokens") t = &w.embed;
    else if (kind == "norm") t = &w.final_norm;
    else if (kind == "lm_head") t = &w.lm_head;
  } else if (layer < static_cast<int>(w.layers.size())) {
    LayerWeights& l = w.layers[layer];
    if (kind == "input_layernorm") t = &l.attn_norm;
    else if (kind == "q_proj") t = &l.wq;
    else if (kind == "k_proj") t = &l.wk;
    else if (kind == "v_proj") t = &l.wv;
    else if (kind == "o_proj") t = &l.wo;
    else if (kind == "q_proj.bias") t = &l.bq;
    else if (kind == "k_proj.bias") t = &l.bk;
    else if (kind == "v_proj.bias") t = &l.bv;
    else if (kind == "o_proj.bias") t = &l.bo;
    else if (kind == "q_norm") t = &l.q_norm;
    else if (kind == "k_norm") t = &l.k_norm;
    else if (kind == "post_attention_layernorm") t = &l.ffn_norm;
    else if (kind == "gate_proj") t = &l.w_gate;
    else if (kind == "up_proj") t = &l.w_up;
    else if (kind == "down_proj") t = &l.w_down;
  }
  // A slot the config does not use (e.g. a bias on a bias-free model) is not offered.
  return t != nullptr && t->required ? t : nullptr;
}

std::string missing_weights(const Model& model) {
  std::string missing;
  int count = 0;
  auto check = [&](const Tensor& t, const char* name, int layer) {
    if (!t.required || t.loaded) return;
    if (++count <= 3) {
      if (!missing.empty()) missing += ", ";
      missing += name;
      if (layer >= 0) missing += " (layer " + std::to_string(layer) + ")";
    }
  };
  const Weights& w = model.weights;
  check(w.embed, "embed_tokens", -1);
  check(w.final_norm, "norm", -1);
  check(w.lm_head, "lm_head", -1);
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const LayerWeights& l = w.layers[i];
    const int li = static_cast<int>(i);
    check(l.attn_norm, "input_layernorm", li);
    check(l.wq, "q_proj", li);
    check(l.wk, "k_proj", li);
    check(l.wv, "v_proj", li);
    check(l.wo, "o_proj", li);
    check(l.bq, "q_proj.bias", li);
    check(l.bk, "k_proj.bias", li);
    check(l.bv, "v_proj.bias", li);
    check(l.bo, "o_proj.bias", li);
    check(l.q_norm, "q_norm", li);
    check(l.k_norm, "k_norm", li);
    check(l.ffn_norm, "post_attention_layernorm", li);
    check(l.w_gate, "gate_proj", li);
    check(l.w_up, "up_proj", li);
    check(l.w_down, "down_proj", li);
  }
  if (count > 3) missing += " and " + std::to_string(count - 3) + " more";
  return missing;
}

std::string load_weight(Tensor& slot, const std::string& path, uint64_t offset, const std::string& dtype,
                        const std::vector<int64_t>& shape) {
  // Shape: [rows, cols] for matrices (even when cols == 1), [rows] for vectors.
  const bool shape_ok = slot.vector ? (shape.size() == 1 && shape[0] == slot.rows)
                                    : (shape.size() == 2 && shape[0] == slot.rows && shape[1] == slot.cols);
  if (!shape_ok) {
    std::string want = "[" + std::to_string(slot.rows) + (slot.vector ? "" : ", " + std::to_string(slot.cols)) + "]";
    return "shape mismatch: expected " + want;
  }
  size_t element_bytes;
  if (dtype == "F32") element_bytes = 4;
  else if (dtype == "F16" || dtype == "BF16") element_bytes = 2;
  else return "unsupported dtype " + dtype + " (expected F32, F16 or BF16)";

  const uint64_t count = static_cast<uint64_t>(slot.rows) * static_cast<uint64_t>(slot.cols);
  const uint64_t bytes = count * element_bytes;

  std::ifstream file(path, std::ios::binary);
  if (!file) return "cannot open " + path;
  file.seekg(0, std::ios::end);
  const std::streamoff size = file.tellg();
  // Invariant: offset + bytes <= file size, checked without overflow.
  if (size < 0 || offset > static_cast<uint64_t>(size) || bytes > static_cast<uint64_t>(size) - offset)
    return "tensor data [" + std::to_string(offset) + ", +" + std::to_string(bytes) + ") lies outside the file (" +
           std::to_string(size) + " bytes)";

  // Matrices keep a 16-bit dtype; vectors (norms, biases) are widened here.
  const bool keep_16bit = element_bytes == 2 && !slot.vector;
  slot.loaded = false;  // until every byte is in
  try {
    slot.data.clear();
    slot.half.clear();
    if (keep_16bit) slot.half.assign(static_cast<size_t>(count), 0);
    else slot.data.assign(static_cast<size_t>(count), 0.0f);
  } catch (const std::bad_alloc&) {
    return "out of memory allocating " + std::to_string(count * (keep_16bit ? 2 : 4)) + " bytes";
  }
  slot.type = !keep_16bit ? WeightType::F32 : dtype == "F16" ? WeightType::F16 : WeightType::BF16;
  file.seekg(static_cast<std::streamoff>(offset), std::ios::beg);
  // Read in chunks; the file is little-endian, as are all supported hosts.
  const size_t chunk_elements = 1 << 20;
  std::vector<uint16_t> buffer;
  if (element_bytes == 2 && !keep_16bit) buffer.resize(std::min<uint64_t>(chunk_elements, count));
  for (uint64_t done = 0; done < count;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk_elements, count - done));
    if (element_bytes == 4) {
      file.read(reinterpret_cast<char*>(slot.data.data() + done), static_cast<std::streamsize>(n * 4));
    } else if (keep_16bit) {
      file.read(reinterpret_cast<char*>(slot.half.data() + done), static_cast<std::streamsize>(n * 2));
    } else {
      file.read(reinterpret_cast<char*>(buffer.data()), static_cast<std::streamsize>(n * 2));
      float* dst = slot.data.data() + done;
      if (dtype == "F16")
        for (size_t i = 0; i < n; ++i) dst[i] = f16_to_f32(buffer[i]);
      else
        for (size_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(buffer[i]);
    }
    if (!file) {
      slot.data.clear();
      slot.half.clear();
      return "read error in " + path;
    }
    done += n;
  }
  slot.loaded = true;
  return "";
}

// Total physical memory, or 0 when unknown.
static double physical_memory_bytes() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return static_cast<double>(pages) * static_cast<double>(page);
#endif
  return 0;
}

// Bytes a cache of `elements` values takes, u8's per-row (scale, min) included.
static double cache_bytes(size_t elements, int head_dim, KvPrecision precision) {
  const double n = static_cast<double>(elements);
  if (precision == KvPrecision::F32) return n * 4;
  if (precision == KvPrecision::F16) return n * 2;
  return n + n / head_dim * 2 * sizeof(float);
}

// Bytes held by the loaded weights.
static double weight_bytes(const Weights& w) {
  double total = 0;
  auto add = [&](const Tensor& t) {
    total += static_cast<double>(t.data.size()) * sizeof(float) + static_cast<double>(t.half.size()) * sizeof(uint16_t);
  };
  add(w.embed);
  add(w.final_norm);
  add(w.lm_head);
  for (const LayerWeights& l : w.layers)
    for (const Tensor* t : {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.bq, &l.bk, &l.bv, &l.bo, &l.q_norm, &l.k_norm,
                            &l.ffn_norm, &l.w_gate, &l.w_up, &l.w_down})
      add(*t);
  return total;
}

std::string allocate_cache(Model& model, int num_blocks, int block_size, KvPrecision precision) {
  const ModelConfig& c = model.config;
  if (num_blocks < 2) return "numBlocks must be at least 2 (block 0 is the null block)";
  if (block_size < 1 || block_size > 65536) return "blockSize must be in [1, 65536]";
  // elements = layers * 2 * blocks * kv_heads * block_size * head_dim, in 64 bits
  // (every factor < 2^31 and the model dims were bounded at construction).
  const double estimate = 2.0 * c.layers * num_blocks * c.kv_heads * static_cast<double>(block_size) * c.head_dim;
  if (estimate > 9.0e15) return "KV cache too large";
  const size_t elements = static_cast<size_t>(2) * c.layers * static_cast<size_t>(num_blocks) * c.kv_heads *
                          static_cast<size_t>(block_size) * c.head_dim;
  const double bytes = cache_bytes(elements, c.head_dim, precision);
  // The cache is zero-filled at once; more than the machine's RAM would get the
  // process killed by the OOM killer instead of failing here. What must fit:
  // the weights, the new cache and the old one (freed only once the new one is in).
  const double ram = physical_memory_bytes();
  const double old_cache = cache_bytes(model.cache.elements, c.head_dim, model.cache.precision);
  const double needed = weight_bytes(model.weights) + old_cache + bytes;
  if (ram > 0 && needed > ram)
    return "a KV cache of " + std::to_string(static_cast<uint64_t>(bytes)) + " bytes, with the weights and the current cache (" +
           std::to_string(static_cast<uint64_t>(needed)) + " bytes in all), exceeds the physical memory (" +
           std::to_string(static_cast<uint64_t>(ram)) + " bytes)";
  KvCache fresh;
  fresh.num_blocks = num_blocks;
  fresh.block_size = block_size;
  fresh.precision = precision;
  fresh.elements = elements;
  try {
    if (precision == KvPrecision::F32) fresh.f32.assign(elements, 0.0f);
    else if (precision == KvPrecision::F16) fresh.f16.assign(elements, 0);
    else {
      fresh.u8.assign(elements, 0);
      fresh.u8_params.assign(elements / c.head_dim * 2, 0.0f);
    }
  } catch (const std::bad_alloc&) {
    return "out of memory allocating the KV cache (" + std::to_string(elements) + " elements)";
  }
  model.cache = std::move(fresh);
  return "";
}

}  // namespace weft
