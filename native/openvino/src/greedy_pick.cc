#include "greedy_pick.h"

namespace weft_ov {

int32_t greedy_pick(const float* row, size_t n) {
  size_t best = 0;
  float best_value = row[0];
  for (size_t i = 1; i < n; ++i) {
    if (row[i] > best_value) {  // false for NaN on either side: the rule above
      best_value = row[i];
      best = i;
    }
  }
  return static_cast<int32_t>(best);
}

}  // namespace weft_ov
