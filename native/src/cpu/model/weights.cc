// The weight slot table: the one list of the weights a model has, and the
// walks over it. Loading a tensor into a slot is weight_load.cc.
#include "model/weights.h"

namespace weft {
namespace {

// The one list of weights a Llama-family model has, hybrid (Qwen3.5) layers
// included: a layer slot's Mixer says whether attention layers, Gated DeltaNet
// layers or both have it. Every other list (the TypeScript load plan included)
// is made from this one.
constexpr SlotSpec kModelSlots[] = {
    {"embed_tokens", false, Dim::Vocab, Dim::Hidden, false, Needed::Always},
    {"norm", false, Dim::Hidden, Dim::Hidden, true, Needed::Always, Mixer::Any, true},
    {"lm_head", false, Dim::Vocab, Dim::Hidden, false, Needed::UntiedHead},
};
Tensor Weights::*const kModelMembers[] = {&Weights::embed, &Weights::final_norm, &Weights::lm_head};

constexpr SlotSpec kLayerSlots[] = {
    {"input_layernorm", true, Dim::Hidden, Dim::Hidden, true, Needed::Always, Mixer::Any, true},
    {"q_proj", true, Dim::QGateDim, Dim::Hidden, false, Needed::Always, Mixer::Attention},
    {"k_proj", true, Dim::KvDim, Dim::Hidden, false, Needed::Always, Mixer::Attention},
    {"v_proj", true, Dim::KvDim, Dim::Hidden, false, Needed::Always, Mixer::Attention},
    {"o_proj", true, Dim::Hidden, Dim::QDim, false, Needed::Always, Mixer::Attention},
    {"q_proj.bias", true, Dim::QGateDim, Dim::QGateDim, true, Needed::WithQkvBias, Mixer::Attention},
    {"k_proj.bias", true, Dim::KvDim, Dim::KvDim, true, Needed::WithQkvBias, Mixer::Attention},
    {"v_proj.bias", true, Dim::KvDim, Dim::KvDim, true, Needed::WithQkvBias, Mixer::Attention},
    {"o_proj.bias", true, Dim::Hidden, Dim::Hidden, true, Needed::WithOBias, Mixer::Attention},
    {"q_norm", true, Dim::HeadDim, Dim::HeadDim, true, Needed::WithQkNorm, Mixer::Attention, true},
    {"k_norm", true, Dim::HeadDim, Dim::HeadDim, true, Needed::WithQkNorm, Mixer::Attention, true},
    {"linear_attn.in_proj_qkv", true, Dim::ConvDim, Dim::Hidden, false, Needed::Always, Mixer::Linear},
    {"linear_attn.in_proj_z", true, Dim::LinValue, Dim::Hidden, false, Needed::Always, Mixer::Linear},
    {"linear_attn.in_proj_b", true, Dim::LinHeads, Dim::Hidden, false, Needed::Always, Mixer::Linear},
    {"linear_attn.in_proj_a", true, Dim::LinHeads, Dim::Hidden, false, Needed::Always, Mixer::Linear},
    {"linear_attn.conv1d", true, Dim::ConvTaps, Dim::ConvTaps, true, Needed::Always, Mixer::Linear},
    {"linear_attn.A_log", true, Dim::LinHeads, Dim::LinHeads, true, Needed::Always, Mixer::Linear},
    {"linear_attn.dt_bias", true, Dim::LinHeads, Dim::LinHeads, true, Needed::Always, Mixer::Linear},
    {"linear_attn.norm", true, Dim::LinHeadDim, Dim::LinHeadDim, true, Needed::Always, Mixer::Linear},
    {"linear_attn.out_proj", true, Dim::Hidden, Dim::LinValue, false, Needed::Always, Mixer::Linear},
    {"post_attention_layernorm", true, Dim::Hidden, Dim::Hidden, true, Needed::Always, Mixer::Any, true},
    {"gate_proj", true, Dim::Intermediate, Dim::Hidden, false, Needed::Always},
    {"up_proj", true, Dim::Intermediate, Dim::Hidden, false, Needed::Always},
    {"down_proj", true, Dim::Hidden, Dim::Intermediate, false, Needed::Always},
};
Tensor LayerWeights::*const kLayerMembers[] = {
    &LayerWeights::attn_norm,  &LayerWeights::wq,          &LayerWeights::wk,        &LayerWeights::wv,
    &LayerWeights::wo,         &LayerWeights::bq,          &LayerWeights::bk,        &LayerWeights::bv,
    &LayerWeights::bo,         &LayerWeights::q_norm,      &LayerWeights::k_norm,    &LayerWeights::lin_qkv,
    &LayerWeights::lin_z,      &LayerWeights::lin_b,       &LayerWeights::lin_a,     &LayerWeights::lin_conv,
    &LayerWeights::lin_a_log,  &LayerWeights::lin_dt_bias, &LayerWeights::lin_norm,  &LayerWeights::lin_out,
    &LayerWeights::ffn_norm,   &LayerWeights::w_gate,      &LayerWeights::w_up,      &LayerWeights::w_down,
};
static_assert(sizeof(kModelSlots) / sizeof(kModelSlots[0]) == sizeof(kModelMembers) / sizeof(kModelMembers[0]),
              "one member per model slot");
static_assert(sizeof(kLayerSlots) / sizeof(kLayerSlots[0]) == sizeof(kLayerMembers) / sizeof(kLayerMembers[0]),
              "one member per layer slot");

int64_t size_of(Dim d, const ModelConfig& c) {
  switch (d) {
    case Dim::Hidden: return c.hidden;
    case Dim::QDim: return static_cast<int64_t>(c.heads) * c.head_dim;
    case Dim::QGateDim: return static_cast<int64_t>(c.heads) * c.head_dim * (c.attn_output_gate ? 2 : 1);
    case Dim::KvDim: return static_cast<int64_t>(c.kv_heads) * c.head_dim;
    case Dim::HeadDim: return c.head_dim;
    case Dim::Intermediate: return c.intermediate;
    case Dim::Vocab: return c.vocab;
    case Dim::ConvDim: return c.conv_dim();
    case Dim::LinValue: return c.lin_value_total();
    case Dim::LinHeads: return c.lin_value_heads;
    case Dim::LinHeadDim: return c.lin_value_dim;
    case Dim::ConvTaps: return static_cast<int64_t>(c.conv_dim()) * c.conv_kernel;
  }
  return 0;
}

bool is_needed(const SlotSpec& spec, int layer, const ModelConfig& c) {
  if (spec.mixer != Mixer::Any && layer >= 0 && c.is_linear(layer) != (spec.mixer == Mixer::Linear)) return false;
  switch (spec.needed) {
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
  for_each_slot(w, [&](const SlotSpec& spec, int layer, Tensor& t) {
    t = Tensor{};
    t.spec = &spec;
    t.rows = size_of(spec.rows, c);
    t.cols = spec.vector ? 1 : size_of(spec.cols, c);
    t.vector = spec.vector;
    t.required = is_needed(spec, layer, c);
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

}  // namespace weft
