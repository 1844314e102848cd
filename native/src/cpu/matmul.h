#pragma once
#include "thread_pool.h"

namespace weft {

// out[t * N + n] = sum_k in[t * K + k] * w[n * K + k] (+ bias[n]) for t < T, n < N.
// Every output is summed in one fixed order (see matmul.cc), so a row's result
// does not depend on T, on the other rows or on the thread count.
void matmul(ThreadPool& pool, float* out, const float* in, const float* w, const float* bias, int T, int N, int K);

}  // namespace weft
