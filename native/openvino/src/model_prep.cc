#include "model_prep.h"

#include <stdexcept>

#include <openvino/op/constant.hpp>
#include <openvino/op/convert.hpp>
#include <openvino/op/gather.hpp>
#include <openvino/op/matmul.hpp>
#include <openvino/op/parameter.hpp>
#include <openvino/pass/manager.hpp>
#include <openvino/pass/sdpa_to_paged_attention.hpp>

namespace weft_ov {
namespace {

bool has_input(const std::shared_ptr<ov::Model>& model, const std::string& name) {
  for (const auto& in : model->inputs())
    if (in.get_names().count(name)) return true;
  return false;
}

bool has_op_named(const std::shared_ptr<ov::Model>& model, const std::string& type_name) {
  for (const auto& node : model->get_ops())
    if (type_name == node->get_type_name()) return true;
  return false;
}

std::shared_ptr<ov::Node> logits_result(const std::shared_ptr<ov::Model>& model) {
  for (const auto& out : model->outputs())
    if (out.get_names().count("logits")) return out.get_node_shared_ptr();
  if (model->outputs().size() == 1) return model->output(0).get_node_shared_ptr();
  throw std::runtime_error("the model has no \"logits\" output");
}

}  // namespace

bool ensure_paged_attention(const std::shared_ptr<ov::Model>& model) {
  // By type name: the wheel's headers do not carry the PagedAttentionExtension op class.
  if (has_op_named(model, "PagedAttentionExtension")) {
    if (!has_input(model, "key_cache.0"))
      throw std::runtime_error("the model has PagedAttention operations but no key_cache.0 input");
    return false;
  }
  if (!has_op_named(model, "ScaledDotProductAttention"))
    throw std::runtime_error(
        "the model has neither PagedAttention nor ScaledDotProductAttention operations: not an LLM IR weft can run "
        "(export it with optimum-intel, or tools/openvino/make_ir.py)");
  if (!has_input(model, "input_ids"))
    throw std::runtime_error("the model has no input_ids input");
  // A graph whose position_ids input feeds nothing takes its positions from the
  // stateful cache's length. Converted, that length becomes max_context_len minus
  // the step's tokens: one position for every token of a step, wrong for any
  // prompt step longer than one token and for batches. optimum-intel 2.2.0's
  // Qwen3.5 export is such a graph (docs/openvino.md, "Hybrid models").
  bool positions_unused = false;
  for (const auto& in : model->inputs())
    if (in.get_names().count("position_ids")) positions_unused = in.get_target_inputs().empty();
  ov::pass::Manager manager;
  manager.register_pass<ov::pass::SDPAToPagedAttention>();
  manager.run_passes(model);
  if (!has_input(model, "key_cache.0") || !has_input(model, "past_lens"))
    throw std::runtime_error("SDPAToPagedAttention left the model without key_cache.0 / past_lens inputs");
  // Whatever state the pass did not turn into cache inputs would be kept per
  // infer request, shared by every sequence of a batch: refuse it by name.
  std::string left;
  for (const auto& node : model->get_ops())
    if (std::string(node->get_type_name()) == "ReadValue") left += (left.empty() ? "" : ", ") + node->get_friendly_name();
  if (!left.empty())
    throw std::runtime_error("SDPAToPagedAttention left stateful variables in the model (" + left +
                             "): weft cannot page that state");
  bool linear = false;
  for (const auto& in : model->inputs())
    for (const auto& name : in.get_names())
      if (name.find("_state_table.") != std::string::npos) linear = true;
  if (linear && positions_unused)
    throw std::runtime_error(
        "the model's position_ids input feeds nothing (its RoPE positions come from the stateful cache length), which "
        "is wrong once paged: re-export it, or fix it with `python3 tools/openvino/export_hybrid.py --fix-only --model "
        "<unused> --out <the IR folder>`");
  return true;
}

void gather_logits_rows(const std::shared_ptr<ov::Model>& model) {
  const auto result = logits_result(model);
  // Walk up the data path: Result <- (Convert, Multiply, Tanh, ... one-data-input ops) <- MatMul.
  ov::Output<ov::Node> head_input;
  std::shared_ptr<ov::Node> node = result->get_input_node_shared_ptr(0);
  for (int hops = 0; hops < 8 && node; ++hops) {
    if (ov::is_type<ov::op::v0::MatMul>(node)) {
      head_input = node->input_value(0);
      break;
    }
    if (node->get_input_size() == 0 || ov::is_type<ov::op::v0::Parameter>(node)) break;
    node = node->get_input_node_shared_ptr(0);
  }
  auto indices = std::make_shared<ov::op::v0::Parameter>(ov::element::i64, ov::PartialShape{-1});
  indices->set_friendly_name(kLogitsIndices);
  indices->get_output_tensor(0).set_names({kLogitsIndices});
  const ov::Output<ov::Node> target = head_input.get_node() ? head_input : result->input_value(0);
  // The token axis: SDPAToPagedAttention unsqueezes input_ids [T] to [T, 1], so the
  // hidden states are [T, 1, hidden]; some exports give [1, T, hidden] or [T, hidden].
  const ov::PartialShape& rows_shape = target.get_partial_shape();
  int64_t token_axis = 0;
  if (rows_shape.rank().is_static() && rows_shape.rank().get_length() == 3) {
    const bool second_is_one = rows_shape[1].is_static() && rows_shape[1].get_length() == 1;
    const bool first_is_one = rows_shape[0].is_static() && rows_shape[0].get_length() == 1;
    token_axis = second_is_one ? 0 : first_is_one ? 1 : -1;
  }
  if (token_axis < 0) throw std::runtime_error("cannot tell the token axis of the LM head input " + rows_shape.to_string());
  const auto axis = ov::op::v0::Constant::create(ov::element::i64, ov::Shape{}, {token_axis});
  auto consumers = target.get_target_inputs();
  auto gather = std::make_shared<ov::op::v8::Gather>(target, indices, axis);
  gather->set_friendly_name("weft_logits_rows");
  for (auto& input : consumers) {
    // Only the LM head (or the Result) reads the gathered rows; other consumers of
    // the hidden states (none in an LLM IR) keep every row.
    if (input.get_node() == node.get() || input.get_node() == result.get()) input.replace_source_output(gather);
  }
  model->add_parameters({indices});
  model->validate_nodes_and_infer_types();
}

}  // namespace weft_ov
