#include "greedy_pick.h"

namespace weft_ov {

namespace {
// Values per block: a block is first asked one question, "does any beat the best so
// far?", a loop of a fixed 16 compares that the compiler turns into vector compares;
// once a large logit has been seen the answer is almost always no, and only a block
// that says yes is scanned one by one. Same pick as the plain scan.
constexpr size_t kBlock = 16;
}  // namespace

int32_t greedy_pick(const float* row, size_t n) {
  size_t best = 0;
  float best_value = row[0];
  size_t i = 1;
  for (; i + kBlock <= n; i += kBlock) {
    bool any = false;
    for (size_t j = 0; j < kBlock; ++j) any |= row[i + j] > best_value;  // false for NaN on either side
    if (!any) continue;
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
