// Buffers that only grow: kept between steps, sized for the largest step seen,
// so a step no larger than one before it allocates nothing (StepState,
// MatmulScratch).
#pragma once
#include <cstddef>
#include <vector>

namespace weft {

// v.size() >= n afterwards; never shrinks v.
template <class T>
inline void grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

}  // namespace weft
