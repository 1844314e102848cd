// The weight slot table, and loading tensors from files into the slots.
//
// The TypeScript side parses and validates the safetensors headers (names,
// dtypes, shapes, offsets) against the slots this model reports, and then asks
// for each tensor by file and byte offset. The bytes go straight from the file
// into native memory, chunk by chunk, so the JS heap never holds weights. This
// file checks again what it relies on: the shape matches the slot, and the byte
// range lies inside the file.
#include "model/weights.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <new>

#include "base/half.h"
#include "kernels/float/sextets.h"
#include "kernels/quant/kquant/quant_k.h"
#include "kernels/quant/quant.h"
#include "kernels/quant/quant_formats.h"
#include "kernels/quant/quant_repack.h"

namespace weft {
namespace {

// The one list of weights a Llama-family model has. Every other list (the
// TypeScript load plan included) is made from this one.
constexpr SlotSpec kModelSlots[] = {
    {"embed_tokens", false, Dim::Vocab, Dim::Hidden, false, Needed::Always},
    {"norm", false, Dim::Hidden, Dim::Hidden, true, Needed::Always},
    {"lm_head", false, Dim::Vocab, Dim::Hidden, false, Needed::UntiedHead},
};
Tensor Weights::*const kModelMembers[] = {&Weights::embed, &Weights::final_norm, &Weights::lm_head};

constexpr SlotSpec kLayerSlots[] = {
    {"input_layernorm", true, Dim::Hidden, Dim::Hidden, true, Needed::Always},
    {"q_proj", true, Dim::QDim, Dim::Hidden, false, Needed::Always},
    {"k_proj", true, Dim::KvDim, Dim::Hidden, false, Needed::Always},
    {"v_proj", true, Dim::KvDim, Dim::Hidden, false, Needed::Always},
    {"o_proj", true, Dim::Hidden, Dim::QDim, false, Needed::Always},
    {"q_proj.bias", true, Dim::QDim, Dim::QDim, true, Needed::WithQkvBias},
    {"k_proj.bias", true, Dim::KvDim, Dim::KvDim, true, Needed::WithQkvBias},
    {"v_proj.bias", true, Dim::KvDim, Dim::KvDim, true, Needed::WithQkvBias},
    {"o_proj.bias", true, Dim::Hidden, Dim::Hidden, true, Needed::WithOBias},
    {"q_norm", true, Dim::HeadDim, Dim::HeadDim, true, Needed::WithQkNorm},
    {"k_norm", true, Dim::HeadDim, Dim::HeadDim, true, Needed::WithQkNorm},
    {"post_attention_layernorm", true, Dim::Hidden, Dim::Hidden, true, Needed::Always},
    {"gate_proj", true, Dim::Intermediate, Dim::Hidden, false, Needed::Always},
    {"up_proj", true, Dim::Intermediate, Dim::Hidden, false, Needed::Always},
    {"down_proj", true, Dim::Hidden, Dim::Intermediate, false, Needed::Always},
};
Tensor LayerWeights::*const kLayerMembers[] = {
    &LayerWeights::attn_norm, &LayerWeights::wq,     &LayerWeights::wk,       &LayerWeights::wv,
    &LayerWeights::wo,        &LayerWeights::bq,     &LayerWeights::bk,       &LayerWeights::bv,
    &LayerWeights::bo,        &LayerWeights::q_norm, &LayerWeights::k_norm,   &LayerWeights::ffn_norm,
    &LayerWeights::w_gate,    &LayerWeights::w_up,   &LayerWeights::w_down,
};
static_assert(sizeof(kModelSlots) / sizeof(kModelSlots[0]) == sizeof(kModelMembers) / sizeof(kModelMembers[0]),
              "one member per model slot");
static_assert(sizeof(kLayerSlots) / sizeof(kLayerSlots[0]) == sizeof(kLayerMembers) / sizeof(kLayerMembers[0]),
              "one member per layer slot");

int64_t size_of(Dim d, const ModelConfig& c) {
  switch (d) {
    case Dim::Hidden: return c.hidden;
    case Dim::QDim: return static_cast<int64_t>(c.heads) * c.head_dim;
    case Dim::KvDim: return static_cast<int64_t>(c.kv_heads) * c.head_dim;
    case Dim::HeadDim: return c.head_dim;
    case Dim::Intermediate: return c.intermediate;
    case Dim::Vocab: return c.vocab;
  }
  return 0;
}

bool is_needed(Needed n, const ModelConfig& c) {
  switch (n) {
    case Needed::Always: return true;
    case Needed::WithQkvBias: return c.qkv_bias;
    case Needed::WithOBias: return c.o_bias;
    case Needed::WithQkNorm: return c.qk_norm;
    case Needed::UntiedHead: return !c.tied_embeddings;
  }
  return false;
}

}  // namespace

void for_each_slot(Weights& w, const std::function<void(const SlotSpec&, int, Tensor&)>& fn) {
  for (size_t i = 0; i < sizeof(kModelSlots) / sizeof(kModelSlots[0]); ++i) fn(kModelSlots[i], -1, w.*kModelMembers[i]);
  for (size_t layer = 0; layer < w.layers.size(); ++layer)
    for (size_t i = 0; i < sizeof(kLayerSlots) / sizeof(kLayerSlots[0]); ++i)
      fn(kLayerSlots[i], static_cast<int>(layer), w.layers[layer].*kLayerMembers[i]);
}

void for_each_slot(const Weights& w, const std::function<void(const SlotSpec&, int, const Tensor&)>& fn) {
  for_each_slot(const_cast<Weights&>(w), [&](const SlotSpec& s, int layer, Tensor& t) { fn(s, layer, t); });
}

void init_weight_slots(Weights& w, const ModelConfig& c) {
  // Every slot starts empty (the arena, filled by loads, is kept).
  w.layers.assign(c.layers, LayerWeights{});
  for_each_slot(w, [&](const SlotSpec& spec, int, Tensor& t) {
    t = Tensor{};
    t.spec = &spec;
    t.rows = size_of(spec.rows, c);
    t.cols = spec.vector ? 1 : size_of(spec.cols, c);
    t.vector = spec.vector;
    t.required = is_needed(spec.needed, c);
  });
}

Tensor* find_weight_slot(Weights& w, const std::string& kind, int layer) {
  if (layer >= static_cast<int>(w.layers.size())) return nullptr;
  Tensor* found = nullptr;
  for_each_slot(w, [&](const SlotSpec& spec, int l, Tensor& t) {
    if (l == layer && t.required && kind == spec.kind) found = &t;
  });
  return found;
}

std::string missing_weights(const Weights& w) {
  std::string missing;
  int count = 0;
  for_each_slot(w, [&](const SlotSpec& spec, int layer, const Tensor& t) {
    if (!t.required || t.loaded) return;
    if (++count <= 3) {
      if (!missing.empty()) missing += ", ";
      missing += spec.kind;
      if (layer >= 0) missing += " (layer " + std::to_string(layer) + ")";
    }
  });
  if (count > 3) missing += " and " + std::to_string(count - 3) + " more";
  return missing;
}

double weight_bytes(const Weights& w) {
  double total = 0;
  for_each_slot(w, [&](const SlotSpec&, int, const Tensor& t) { total += t.bytes(); });
  return total;
}

namespace {

struct SourceType {
  WeightType type;
  size_t element_bytes;  // 0 for block formats
};

bool parse_dtype(const std::string& dtype, SourceType* out) {
  if (dtype == "F32") *out = {WeightType::F32, 4};
  else if (dtype == "F16") *out = {WeightType::F16, 2};
  else if (dtype == "BF16") *out = {WeightType::BF16, 2};
  else if (dtype == "Q8_0") *out = {WeightType::Q8_0, 0};
  else if (dtype == "Q4_0") *out = {WeightType::Q4_0, 0};
  else if (dtype == "Q4_K") *out = {WeightType::Q4_K, 0};
  else if (dtype == "Q6_K") *out = {WeightType::Q6_K, 0};
  else return false;
  return true;
}

// Reads `bytes` at `offset` of an open file in chunks, handing each chunk to
// `take(data, size)`; chunks hold whole units of `unit` bytes. "" or an error.
template <typename Take>
std::string read_chunks(std::ifstream& file, const std::string& path, uint64_t offset, uint64_t bytes, size_t unit, Take take) {
  file.seekg(static_cast<std::streamoff>(offset), std::ios::beg);
  const size_t chunk = std::max<size_t>(unit, (size_t{4} << 20) / unit * unit);
  std::vector<char> buffer(static_cast<size_t>(std::min<uint64_t>(chunk, bytes)));
  for (uint64_t done = 0; done < bytes;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk, bytes - done));
    file.read(buffer.data(), static_cast<std::streamsize>(n));
    if (!file) return "read error in " + path;
    take(buffer.data(), n);
    done += n;
  }
  return "";
}

}  // namespace

std::string load_weight(WeightArena& arena, Tensor& slot, const std::string& path, uint64_t offset, const std::string& dtype,
                        const std::vector<int64_t>& shape, WeightType quantize_to, ThreadPool& pool,
                        MappedFiles* mapped_files) {
  // Shape: [rows, cols] for matrices (even when cols == 1), [rows] for vectors.
  const bool shape_ok = slot.vector ? (shape.size() == 1 && shape[0] == slot.rows)
                                    : (shape.size() == 2 && shape[0] == slot.rows && shape[1] == slot.cols);
  if (!shape_ok) {
    std::string want = "[" + std::to_string(slot.rows) + (slot.vector ? "" : ", " + std::to_string(slot.cols)) + "]";
    return "shape mismatch: expected " + want;
  }
  SourceType source;
  if (!parse_dtype(dtype, &source))
    return "unsupported dtype " + dtype + " (expected F32, F16, BF16, Q8_0, Q4_0, Q4_K or Q6_K)";
  const bool quantized_source = is_quantized(source.type);
  if (quantized_source && slot.vector) return "dtype " + dtype + " is for matrices; a vector (norm or bias) must be F32, F16 or BF16";
  if (quantized_source && slot.cols % block_format(source.type).weights != 0)
    return "a " + dtype + " row holds whole blocks of " + std::to_string(block_format(source.type).weights) +
           " weights, but this matrix has " + std::to_string(slot.cols) + " columns";

  const uint64_t count = static_cast<uint64_t>(slot.rows) * static_cast<uint64_t>(slot.cols);
  const size_t row_bytes = quantized_source ? quant_row_bytes(source.type, slot.cols) : slot.cols * source.element_bytes;
  const uint64_t bytes = static_cast<uint64_t>(slot.rows) * row_bytes;

  // What the slot keeps: block formats as they are; float matrices quantized
  // when asked (and their rows are whole 32-blocks), else 16-bit matrices stay
  // 16-bit; vectors become float32.
  WeightType stored = source.type;
  if (!quantized_source) {
    const bool quantize = !slot.vector && is_quantized(quantize_to) && slot.cols % block_format(quantize_to).weights == 0;
    if (quantize) stored = quantize_to;
    else if (slot.vector) stored = WeightType::F32;
  }
  slot.loaded = false;  // until every byte is in
  slot.clear_storage(arena);

  // A matrix kept as stored is used where it lies in the file's mapping.
  // Row-grouped formats (Q8_0, Q4_0, Q4_K, Q6_K) are repacked for their
  // kernels, so they take the copy path below and their mapping is never
  // touched (each weight is once in memory: in its groups). Where the
  // file cannot be mapped, it is read like the rest.
  if (mapped_files != nullptr && stored == source.type && !is_row_grouped(stored) && !slot.vector &&
      offset % kMapAlignment == 0) {
    std::string map_error;
    std::shared_ptr<const MappedFile> mapping = mapped_files->get(path, &map_error);
    if (mapping) {
      // Invariant: offset + bytes <= file size, checked without overflow.
      if (offset > mapping->size() || bytes > mapping->size() - offset)
        return "tensor data [" + std::to_string(offset) + ", +" + std::to_string(bytes) + ") lies outside the file (" +
               std::to_string(mapping->size()) + " bytes)";
      slot.type = stored;
      slot.mapped = mapping->data() + offset;
      slot.mapped_bytes = bytes;
      slot.mapping = std::move(mapping);
      slot.loaded = true;
      return "";
    }
  }

  std::ifstream file(path, std::ios::binary);
  if (!file) return "cannot open " + path;
  file.seekg(0, std::ios::end);
  const std::streamoff size = file.tellg();
  // Invariant: offset + bytes <= file size, checked without overflow.
  if (size < 0 || offset > static_cast<uint64_t>(size) || bytes > static_cast<uint64_t>(size) - offset)
    return "tensor data [" + std::to_string(offset) + ", +" + std::to_string(bytes) + ") lies outside the file (" +
           std::to_string(size) + " bytes)";

  const size_t stored_row_bytes = is_quantized(stored) ? quant_row_bytes(stored, slot.cols)
                                  : stored == WeightType::F32 ? slot.cols * 4 : slot.cols * 2;
  // Q4_K / Q6_K are kept in k-groups (quant_repack.h), a layout of its own size.
  const bool k_grouped = is_k_quant(stored);
  const size_t stored_bytes = k_grouped ? kgroup_matrix_bytes(stored, slot.rows, slot.cols) : slot.rows * stored_row_bytes;
  // Vectors in their own float32 array; matrices in the arena (zeroed, huge pages).
  uint8_t* dst_bytes = nullptr;
  try {
    if (slot.vector) {
      slot.data.assign(static_cast<size_t>(count), 0.0f);
      dst_bytes = reinterpret_cast<uint8_t*>(slot.data.data());
    } else {
      dst_bytes = arena.allocate(stored_bytes);
      if (dst_bytes == nullptr) throw std::bad_alloc();
      slot.stored = dst_bytes;
      slot.stored_bytes = stored_bytes;
    }
  } catch (const std::bad_alloc&) {
    return "out of memory allocating " + std::to_string(stored_bytes) + " bytes";
  }
  slot.type = stored;

  // The file is little-endian, as are all supported hosts.
  std::string error;
  if (k_grouped) {
    // Read a chunk of whole 16-row groups at a time and pack it straight into
    // its k-groups, the chunk's groups spread over the model's threads: the
    // GGUF rows never exist in memory beyond one chunk.
    const size_t group_rows_bytes = kKGroupRows * row_bytes;
    const size_t group_bytes = kgroup_matrix_bytes(stored, kKGroupRows, slot.cols);
    size_t first_group = 0;
    error = read_chunks(file, path, offset, bytes, group_rows_bytes, [&](const char* p, size_t n) {
      const size_t rows = n / row_bytes, groups = (rows + kKGroupRows - 1) / kKGroupRows;
      const uint8_t* src = reinterpret_cast<const uint8_t*>(p);
      pool.parallel_for(groups, 1, [&](size_t g0, size_t g1, int) {
        const size_t r0 = g0 * kKGroupRows, r1 = std::min(rows, g1 * kKGroupRows);
        pack_kgroups(stored, src + r0 * row_bytes, static_cast<int64_t>(r1 - r0), slot.cols,
                     dst_bytes + (first_group + g0) * group_bytes);
      });
      first_group += groups;
    });
  } else if (stored == source.type) {
    // Copied as they are: F32, 16-bit matrices, block formats.
    char* dst = reinterpret_cast<char*>(dst_bytes);
    error = read_chunks(file, path, offset, bytes, row_bytes, [&](const char* p, size_t n) {
      std::memcpy(dst, p, n);
      dst += n;
    });
  } else {
    // Widened (16-bit vectors) or quantized (float matrices), row by row, the
    // rows of a chunk spread over the model's threads (idle: one operation at
    // a time per model).
    const size_t cols = static_cast<size_t>(slot.cols);
    std::vector<float> rows(pool.size() * cols);
    size_t first_row = 0;
    error = read_chunks(file, path, offset, bytes, row_bytes, [&](const char* p, size_t n) {
      const size_t count_rows = n / row_bytes;
      const size_t grain = std::max<size_t>(1, std::min<size_t>(count_rows, (size_t{1} << 16) / std::max<size_t>(1, cols)));
      pool.parallel_for(count_rows, grain, [&](size_t r0, size_t r1, int thread) {
        float* row = &rows[static_cast<size_t>(thread) * cols];
        for (size_t r = r0; r < r1; ++r) {
          const char* src = p + r * row_bytes;
          for (size_t i = 0; i < cols; ++i) {
            if (source.type == WeightType::F32) std::memcpy(&row[i], src + i * 4, 4);
            else {
              uint16_t h;
              std::memcpy(&h, src + i * 2, 2);
              row[i] = source.type == WeightType::F16 ? f16_to_f32(h) : bf16_to_f32(h);
            }
          }
          const size_t at = first_row + r;
          if (is_quantized(stored)) quantize_row(stored, row, dst_bytes + at * stored_row_bytes, slot.cols);
          else std::memcpy(dst_bytes + at * cols * sizeof(float), row, cols * sizeof(float));
        }
      });
      first_row += count_rows;
    });
  }
  if (!error.empty()) {
    slot.clear_storage(arena);
    return error;
  }
  if ((slot.type == WeightType::F16 || slot.type == WeightType::BF16) && !slot.vector && sextets_fit(slot.cols) &&
      sextets_wanted()) {
    // 16-bit matmuls read sextets (sextets.h): rewritten in place, a range of
    // whole sextets per thread.
    const size_t sextets = static_cast<size_t>(slot.rows) / kSextetRows;
    uint16_t* w = reinterpret_cast<uint16_t*>(dst_bytes);
    pool.parallel_for(sextets, std::max<size_t>(1, (size_t{1} << 20) / (kSextetRows * stored_row_bytes)), [&](size_t g0, size_t g1, int) {
      thread_local std::vector<uint16_t> scratch;
      to_sextets(w, slot.cols, g0, g1, scratch);
    });
    slot.sextets = true;
  }
  if (is_q8_grouped(slot.type)) {
    // Q8_0 / Q4_0 matmuls read row groups (quant_repack.h): rewritten in
    // place, a range of whole groups per thread.
    const size_t group_bytes = kGroupRows * stored_row_bytes, groups = static_cast<size_t>(slot.rows) / kGroupRows;
    pool.parallel_for(groups, std::max<size_t>(1, (size_t{1} << 20) / group_bytes), [&](size_t g0, size_t g1, int) {
      repack_rows(slot.type, dst_bytes + g0 * group_bytes, static_cast<int64_t>(g1 - g0) * kGroupRows, slot.cols);
    });
    // The rows % 8 rows after the last group, packed once here instead of per matmul.
    const int tail_rows = static_cast<int>(slot.rows % kGroupRows);
    if (tail_rows > 0) {
      const uint8_t* rows[kGroupRows];
      for (int r = 0; r < tail_rows; ++r) rows[r] = dst_bytes + (groups * kGroupRows + r) * stored_row_bytes;
      slot.group_tail.assign(group_bytes, 0);
      pack_group(slot.type, rows, tail_rows, slot.cols, slot.group_tail.data());
    }
  }
  slot.loaded = true;
  return "";
}

}  // namespace weft
