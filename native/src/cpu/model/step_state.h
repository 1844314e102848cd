// What every layer of one step shares (forward.cc): where each token sits,
// its RoPE angles, the attention work split, and the step's activation
// buffers. One lives in the Model and serves every step.
//
// Invariant: buffers only grow. prepare_step sizes each for this step
// (`grow`: resized when smaller than the step needs, never shrunk), so a step
// no larger than one before it allocates nothing. Sizes are therefore upper
// bounds: code reads the step's extent from T and the config, never from a
// buffer's size(). Nothing is carried from one step to the next: every value
// a step reads, it wrote first.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/grow.h"
#include "kernels/attention/query_row.h"
#include "kernels/matmul_types.h"

namespace weft {

// Attention work item: up to kAttentionTile consecutive new tokens of one
// sequence with the query heads of one kv head.
constexpr int kAttentionTile = 16;
struct AttentionTile {
  int seq, t0, t1, kv_head;
};

struct StepState {
  int T = 0;
  std::vector<int> seq_of;              // [T] the token's sequence
  std::vector<int64_t> pos_in_cache;    // [T] past + index within the step
  std::vector<float> cos, sin;          // [T][rotary_dim / 2]
  std::vector<AttentionTile> tiles;     // this step's tiles (cleared, then filled)
  size_t tiles_per_chunk = 1;           // all tiles on one thread when attention is small
  size_t token_grain = 4;               // tokens per chunk of the per-token loops
  int max_rows = 0;                     // query rows per tile, at most
  size_t scratch_per_thread = 0;
  std::vector<float> scratch;           // attention scratch, per thread
  std::vector<QueryRow> row_buf;        // attention rows, per thread
  // Activations: x is the residual stream, xb the normalised input of a
  // block's matmuls and then the block's output, added to x by the next
  // block's first pass (or by the LM head, for its rows).
  std::vector<float> x, xb, q, k, v, att, gate, up;
  // Gated attention (attn_output_gate): q_proj's rows [T][heads][query | gate],
  // and the gates split out of them [T][heads * head_dim].
  std::vector<float> q_and_gate, att_gate;
  // A Gated DeltaNet layer (linear_attention.cc): in_proj_qkv's channels
  // [T][conv_dim] (convolved in place), z [T][value heads * value dim], b and a
  // [T][value heads] (turned in place into beta and the log decay g), and the
  // heads' outputs [T][value heads * value dim].
  std::vector<float> lin_qkv, lin_z, lin_b, lin_a, lin_out;
  // Qwen3-Next's fused projections, as the matmul writes them (per key head;
  // split into the five above): [T][conv_dim + value total] and [T][2 value heads].
  std::vector<float> lin_qkvz, lin_ba;
  // A mixture-of-experts layer (moe.cc): router logits, then probabilities
  // [T][experts]; each token's chosen experts and their weights
  // [T][experts_per_token]; the shared expert's gate and up rows
  // [T][shared_intermediate] and its scalar gate [T]; the routed experts' sum
  // [T][hidden]. One expert at a time: its tokens' rows and weights [n], their
  // inputs (then its outputs) [n][hidden], gate and up [n][expert_intermediate].
  std::vector<float> router, route_weight, shared_gate, shared_up, shared_scale, routed_sum;
  std::vector<int32_t> route_expert, expert_rows;
  std::vector<float> expert_row_weight, expert_io, expert_gate, expert_up;
  // [T] the checkpoint slot that receives the state right after this token (0: none).
  std::vector<int32_t> checkpoint_at;
  std::vector<float> head_rows;         // [rows with logits][hidden], normalised
  std::vector<float> hidden_row;        // [hidden]: one token's x + last output, before the final norm (embeddings)
  std::vector<int32_t> type_ids;        // [T] an encoder's token types (0 where the step gives none)
  std::vector<uint8_t> embed_row;       // one GGUF row of a row-grouped embedding table
  MatmulScratch matmul;                 // the matmuls' quantized inputs
};

}  // namespace weft
