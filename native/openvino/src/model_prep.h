// Graph edits applied to an LLM IR before it is compiled (pure OpenVINO, no N-API).
#pragma once

#include <memory>
#include <string>

#include <openvino/core/model.hpp>

namespace weft_ov {

// The name of the input weft adds: i64 [K], the flattened token rows whose logits are needed.
inline constexpr const char* kLogitsIndices = "weft_logits_indices";

// Makes `model` a PagedAttention model. A model that already has PagedAttention
// ops (and key_cache.N inputs) is left as it is; a stateful SDPA model is
// converted with ov::pass::SDPAToPagedAttention, as openvino.genai does. Returns
// true when it converted. Throws std::runtime_error when neither applies.
bool ensure_paged_attention(const std::shared_ptr<ov::Model>& model);

// Adds the weft_logits_indices input and a Gather of those rows of the hidden
// states just before the LM head MatMul (found by walking up from the "logits"
// result), so the LM head runs only for the rows the engine samples. If no MatMul
// is found on that path, the Gather goes on the logits themselves (same result,
// full cost). Throws std::runtime_error if the model has no "logits" output.
void gather_logits_rows(const std::shared_ptr<ov::Model>& model);

}  // namespace weft_ov
