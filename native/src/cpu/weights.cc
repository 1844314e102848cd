// The weight slot table, and loading tensors from files into the slots.
//
// The TypeScript side parses and validates the safetensors headers (names,
// dtypes, shapes, offsets) against the slots this model reports, and then asks
// for each tensor by file and byte offset. The bytes go straight from the file
// into native memory, chunk by chunk, so the JS heap never holds weights. This
// file checks again what it relies on: the shape matches the slot, and the byte
// range lies inside the file.
#include "weights.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <new>

#include "half.h"

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
  w = Weights{};
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

}  // namespace weft
