#include "greedy_pick.h"

#include <limits>

namespace weft_ov {

namespace {
// Values per block. A block is first reduced to its largest value, a loop of a
// fixed 16 selects that the compiler turns into vector max instructions; only a
// block whose largest value beats the best so far is scanned one by one. Once a
// large logit has been seen that is rare. (Measured on random rows of 151,936:
// about 2x faster than asking "does any value beat it?" per block, at -O2.)
constexpr size_t kBlock = 16;
}  // namespace

int32_t greedy_pick(const float* row, size_t n) {
  size_t best = 0;
  float best_value = row[0];
  size_t i = 1;
  for (; i + kBlock <= n; i += kBlock) {
    // From -inf, with a select NaN never enters (v > m is false for it), so a NaN in the
    // block hides none of its other values; a NaN best_value is beaten by nothing.
    float largest = -std::numeric_limits<float>::infinity();
    for (size_t j = 0; j < kBlock; ++j) largest = row[i + j] > largest ? row[i + j] : largest;
    if (!(largest > best_value)) continue;
    for (size_t j = i; j < i + kBlock; ++j) {
      if (row[j] > best_value) {
        best_value = row[j];
        best = j;
      }
    }
  }
  for (; i < n; ++i) {
    if (row[i] > best_value) {
      best_value = row[i];
      best = i;
    }
  }
  return static_cast<int32_t>(best);
}

}  // namespace weft_ov
