// The weight slot table: the one list of the weights a model has, and the
// walks over it. Loading a tensor into a slot is weight_load.cc.
#include "model/weights.h"

namespace weft {
namespace {

// The one list of weights a model has: Llama-family decoders, hybrid (Qwen3.5,
// Qwen3-Next) layers included, and BERT-family encoders (a slot's Family says
// which kinds of model have it): a layer slot's Where says which layers have it
// (attention or Gated DeltaNet mixers, dense or mixture-of-experts MLPs), its
// Needed which configs. Every other list (the TypeScript load plan included)
// is made from this one.
constexpr SlotSpec kModelSlots[] = {
    {"embed_tokens", false, Dim::Vocab, Dim::Hidden, false, Needed::Always, Where::Any, false, false, Family::Both},
    {"norm", false, Dim::Hidden, Dim::Hidden, true, Needed::Always, Where::Any, true},
    {"lm_head", false, Dim::Vocab, Dim::Hidden, false, Needed::UntiedHead},
    // Encoders: rows picked by position and segment, never multiplied, so never quantized.
    {"position_embeddings", false, Dim::MaxPositions, Dim::Hidden, false, Needed::WithPositionTable, Where::Any, false, true, Family::Encoder},
    {"token_type_embeddings", false, Dim::TypeVocab, Dim::Hidden, false, Needed::Always, Where::Any, false, true, Family::Encoder},
    {"embeddings_layernorm", false, Dim::Hidden, Dim::Hidden, true, Needed::Always, Where::Any, false, false, Family::Encoder},
    {"embeddings_layernorm.bias", false, Dim::Hidden, Dim::Hidden, true, Needed::Always, Where::Any, false, false, Family::Encoder},
};
Tensor Weights::*const kModelMembers[] = {&Weights::embed,     &Weights::final_norm,  &Weights::lm_head,
                                          &Weights::positions, &Weights::token_types, &Weights::embed_ln,
                                          &Weights::embed_ln_b};

constexpr SlotSpec kLayerSlots[] = {
    {"input_layernorm", true, Dim::Hidden, Dim::Hidden, true, Needed::Always, Where::Any, true},
    {"q_proj", true, Dim::QGateDim, Dim::Hidden, false, Needed::Always, Where::Attention, false, false, Family::Both},
    {"k_proj", true, Dim::KvDim, Dim::Hidden, false, Needed::Always, Where::Attention, false, false, Family::Both},
    {"v_proj", true, Dim::KvDim, Dim::Hidden, false, Needed::Always, Where::Attention, false, false, Family::Both},
    {"o_proj", true, Dim::Hidden, Dim::QDim, false, Needed::Always, Where::Attention, false, false, Family::Both},
    {"q_proj.bias", true, Dim::QGateDim, Dim::QGateDim, true, Needed::WithQkvBias, Where::Attention, false, false, Family::Both},
    {"k_proj.bias", true, Dim::KvDim, Dim::KvDim, true, Needed::WithQkvBias, Where::Attention, false, false, Family::Both},
    {"v_proj.bias", true, Dim::KvDim, Dim::KvDim, true, Needed::WithQkvBias, Where::Attention, false, false, Family::Both},
    {"o_proj.bias", true, Dim::Hidden, Dim::Hidden, true, Needed::WithOBias, Where::Attention, false, false, Family::Both},
    {"q_norm", true, Dim::HeadDim, Dim::HeadDim, true, Needed::WithQkNorm, Where::Attention, true},
    {"k_norm", true, Dim::HeadDim, Dim::HeadDim, true, Needed::WithQkNorm, Where::Attention, true},
    {"linear_attn.in_proj_qkv", true, Dim::ConvDim, Dim::Hidden, false, Needed::SplitLinearProj, Where::Linear},
    {"linear_attn.in_proj_z", true, Dim::LinValue, Dim::Hidden, false, Needed::SplitLinearProj, Where::Linear},
    {"linear_attn.in_proj_b", true, Dim::LinHeads, Dim::Hidden, false, Needed::SplitLinearProj, Where::Linear},
    {"linear_attn.in_proj_a", true, Dim::LinHeads, Dim::Hidden, false, Needed::SplitLinearProj, Where::Linear},
    {"linear_attn.in_proj_qkvz", true, Dim::LinQkvz, Dim::Hidden, false, Needed::FusedLinearProj, Where::Linear},
    {"linear_attn.in_proj_ba", true, Dim::LinBa, Dim::Hidden, false, Needed::FusedLinearProj, Where::Linear},
    {"linear_attn.conv1d", true, Dim::ConvTaps, Dim::ConvTaps, true, Needed::Always, Where::Linear},
    {"linear_attn.A_log", true, Dim::LinHeads, Dim::LinHeads, true, Needed::Always, Where::Linear},
    {"linear_attn.dt_bias", true, Dim::LinHeads, Dim::LinHeads, true, Needed::Always, Where::Linear},
    {"linear_attn.norm", true, Dim::LinHeadDim, Dim::LinHeadDim, true, Needed::Always, Where::Linear},
    {"linear_attn.out_proj", true, Dim::Hidden, Dim::LinValue, false, Needed::Always, Where::Linear},
    {"post_attention_layernorm", true, Dim::Hidden, Dim::Hidden, true, Needed::Always, Where::Any, true},
    {"gate_proj", true, Dim::Intermediate, Dim::Hidden, false, Needed::GatedMlp, Where::DenseMlp, false, false, Family::Both},
    {"up_proj", true, Dim::Intermediate, Dim::Hidden, false, Needed::Always, Where::DenseMlp, false, false, Family::Both},
    {"down_proj", true, Dim::Hidden, Dim::Intermediate, false, Needed::Always, Where::DenseMlp, false, false, Family::Both},
    {"mlp.gate", true, Dim::Experts, Dim::Hidden, false, Needed::Always, Where::Moe, false, true},
    {"mlp.shared_expert.gate_proj", true, Dim::SharedWidth, Dim::Hidden, false, Needed::WithSharedExpert, Where::Moe},
    {"mlp.shared_expert.up_proj", true, Dim::SharedWidth, Dim::Hidden, false, Needed::WithSharedExpert, Where::Moe},
    {"mlp.shared_expert.down_proj", true, Dim::Hidden, Dim::SharedWidth, false, Needed::WithSharedExpert, Where::Moe},
    {"mlp.shared_expert_gate", true, Dim::One, Dim::Hidden, false, Needed::WithSharedExpert, Where::Moe, false, true},
    {"up_proj.bias", true, Dim::Intermediate, Dim::Intermediate, true, Needed::WithMlpBias, Where::Any, false, false, Family::Encoder},
    {"down_proj.bias", true, Dim::Hidden, Dim::Hidden, true, Needed::WithMlpBias, Where::Any, false, false, Family::Encoder},
    {"attention_layernorm", true, Dim::Hidden, Dim::Hidden, true, Needed::Always, Where::Any, false, false, Family::Encoder},
    {"attention_layernorm.bias", true, Dim::Hidden, Dim::Hidden, true, Needed::Always, Where::Any, false, false, Family::Encoder},
    {"output_layernorm", true, Dim::Hidden, Dim::Hidden, true, Needed::Always, Where::Any, false, false, Family::Encoder},
    {"output_layernorm.bias", true, Dim::Hidden, Dim::Hidden, true, Needed::Always, Where::Any, false, false, Family::Encoder},
};
Tensor LayerWeights::*const kLayerMembers[] = {
    &LayerWeights::attn_norm,   &LayerWeights::wq,          &LayerWeights::wk,          &LayerWeights::wv,
    &LayerWeights::wo,          &LayerWeights::bq,          &LayerWeights::bk,          &LayerWeights::bv,
    &LayerWeights::bo,          &LayerWeights::q_norm,      &LayerWeights::k_norm,      &LayerWeights::lin_qkv,
    &LayerWeights::lin_z,       &LayerWeights::lin_b,       &LayerWeights::lin_a,       &LayerWeights::lin_qkvz,
    &LayerWeights::lin_ba,      &LayerWeights::lin_conv,    &LayerWeights::lin_a_log,   &LayerWeights::lin_dt_bias,
    &LayerWeights::lin_norm,    &LayerWeights::lin_out,     &LayerWeights::ffn_norm,    &LayerWeights::w_gate,
    &LayerWeights::w_up,        &LayerWeights::w_down,      &LayerWeights::router,      &LayerWeights::shared_gate,
    &LayerWeights::shared_up,   &LayerWeights::shared_down, &LayerWeights::shared_expert_gate,
    &LayerWeights::b_up,        &LayerWeights::b_down,      &LayerWeights::attn_ln,     &LayerWeights::attn_ln_b,
    &LayerWeights::out_ln,      &LayerWeights::out_ln_b,
};

// Each routed expert's slots, in every mixture-of-experts layer (named by slot_kind()).
constexpr SlotSpec kExpertSlots[] = {
    {"gate_proj", true, Dim::ExpertWidth, Dim::Hidden, false, Needed::Always, Where::Moe},
    {"up_proj", true, Dim::ExpertWidth, Dim::Hidden, false, Needed::Always, Where::Moe},
    {"down_proj", true, Dim::Hidden, Dim::ExpertWidth, false, Needed::Always, Where::Moe},
};
Tensor ExpertWeights::*const kExpertMembers[] = {&ExpertWeights::w_gate, &ExpertWeights::w_up, &ExpertWeights::w_down};

template <typename T, size_t N>
constexpr size_t count_of(const T (&)[N]) { return N; }
static_assert(count_of(kModelSlots) == count_of(kModelMembers), "one member per model slot");
static_assert(count_of(kLayerSlots) == count_of(kLayerMembers), "one member per layer slot");
static_assert(count_of(kExpertSlots) == count_of(kExpertMembers), "one member per expert slot");

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
    case Dim::LinQkvz: return static_cast<int64_t>(c.conv_dim()) + c.lin_value_total();
    case Dim::LinBa: return 2 * static_cast<int64_t>(c.lin_value_heads);
    case Dim::Experts: return c.experts;
    case Dim::ExpertWidth: return c.expert_intermediate;
    case Dim::SharedWidth: return c.shared_intermediate;
    case Dim::One: return 1;
    case Dim::MaxPositions: return c.max_positions;
    case Dim::TypeVocab: return c.type_vocab;
  }
  return 0;
}

bool in_layer(Where where, int layer, const ModelConfig& c) {
  switch (where) {
    case Where::Any: return true;
    case Where::Attention: return !c.is_linear(layer);
    case Where::Linear: return c.is_linear(layer);
    case Where::DenseMlp: return !c.is_moe(layer);
    case Where::Moe: return c.is_moe(layer);
  }
  return false;
}

bool is_needed(const SlotSpec& spec, int layer, const ModelConfig& c) {
  if (spec.family != Family::Both && (spec.family == Family::Encoder) != c.encoder) return false;
  if (layer >= 0 && !in_layer(spec.where, layer, c)) return false;
  switch (spec.needed) {
    case Needed::Always: return true;
    case Needed::WithQkvBias: return c.qkv_bias;
    case Needed::WithOBias: return c.o_bias;
    case Needed::WithQkNorm: return c.qk_norm;
    case Needed::UntiedHead: return !c.tied_embeddings;
    case Needed::SplitLinearProj: return !c.fused_linear_proj;
    case Needed::FusedLinearProj: return c.fused_linear_proj;
    case Needed::WithSharedExpert: return c.shared_intermediate > 0;
    case Needed::GatedMlp: return !c.encoder || c.gated_mlp;
    case Needed::WithMlpBias: return c.encoder && c.mlp_bias;
    case Needed::WithPositionTable: return c.encoder && !c.encoder_rope;
  }
  return false;
}

}  // namespace

void for_each_slot(Weights& w, const std::function<void(const SlotSpec&, int, Tensor&)>& fn) {
  for (size_t i = 0; i < count_of(kModelSlots); ++i) fn(kModelSlots[i], -1, w.*kModelMembers[i]);
  for (size_t layer = 0; layer < w.layers.size(); ++layer) {
    LayerWeights& l = w.layers[layer];
    for (size_t i = 0; i < count_of(kLayerSlots); ++i) fn(kLayerSlots[i], static_cast<int>(layer), l.*kLayerMembers[i]);
    for (ExpertWeights& e : l.experts)
      for (size_t i = 0; i < count_of(kExpertSlots); ++i) fn(kExpertSlots[i], static_cast<int>(layer), e.*kExpertMembers[i]);
  }
}

void for_each_slot(const Weights& w, const std::function<void(const SlotSpec&, int, const Tensor&)>& fn) {
  for_each_slot(const_cast<Weights&>(w), [&](const SlotSpec& s, int layer, Tensor& t) { fn(s, layer, t); });
}

void init_weight_slots(Weights& w, const ModelConfig& c) {
  // Every slot starts empty (the arena, filled by loads, is kept).
  w.layers.assign(c.layers, LayerWeights{});
  for (int layer = 0; layer < c.layers; ++layer)
    if (c.is_moe(layer)) w.layers[layer].experts.resize(c.experts);
  for_each_slot(w, [&](const SlotSpec& spec, int layer, Tensor& t) {
    t = Tensor{};
    t.spec = &spec;
    t.rows = size_of(spec.rows, c);
    t.cols = spec.vector ? 1 : size_of(spec.cols, c);
    t.vector = spec.vector;
    t.required = is_needed(spec, layer, c);
  });
  for (LayerWeights& l : w.layers)
    for (size_t e = 0; e < l.experts.size(); ++e)
      for (Tensor ExpertWeights::*member : kExpertMembers) (l.experts[e].*member).expert = static_cast<int>(e);
}

std::string slot_kind(const Tensor& t) {
  if (t.expert < 0) return t.spec->kind;
  return "mlp.experts." + std::to_string(t.expert) + "." + t.spec->kind;
}

Tensor* find_weight_slot(Weights& w, const std::string& kind, int layer) {
  // Looked up directly rather than by a walk over every slot: a large
  // mixture-of-experts model has tens of thousands of them, one load each.
  auto required = [](Tensor& t) { return t.required ? &t : nullptr; };
  if (layer < 0) {
    for (size_t i = 0; i < count_of(kModelSlots); ++i)
      if (kind == kModelSlots[i].kind) return required(w.*kModelMembers[i]);
    return nullptr;
  }
  if (layer >= static_cast<int>(w.layers.size())) return nullptr;
  LayerWeights& l = w.layers[layer];
  const std::string experts = "mlp.experts.";
  if (kind.compare(0, experts.size(), experts) == 0) {
    const size_t dot = kind.find('.', experts.size());
    const std::string index = kind.substr(experts.size(), dot == std::string::npos ? 0 : dot - experts.size());
    if (index.empty() || index.size() > 6 || index.find_first_not_of("0123456789") != std::string::npos) return nullptr;
    const size_t e = std::stoul(index);
    if (e >= l.experts.size()) return nullptr;
    for (size_t i = 0; i < count_of(kExpertSlots); ++i)
      if (kind.compare(dot + 1, std::string::npos, kExpertSlots[i].kind) == 0) return required(l.experts[e].*kExpertMembers[i]);
    return nullptr;
  }
  for (size_t i = 0; i < count_of(kLayerSlots); ++i)
    if (kind == kLayerSlots[i].kind) return required(l.*kLayerMembers[i]);
  return nullptr;
}

std::string missing_weights(const Weights& w) {
  std::string missing;
  int count = 0;
  for_each_slot(w, [&](const SlotSpec&, int layer, const Tensor& t) {
    if (!t.required || t.loaded) return;
    if (++count <= 3) {
      if (!missing.empty()) missing += ", ";
      missing += slot_kind(t);
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
