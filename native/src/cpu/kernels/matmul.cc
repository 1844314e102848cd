// The entry of the matrix products (matmul.h): a projection of float parts
// goes to the float kernels (float/float_matmul.cc), one of block-format parts
// to the quantized kernels (quant/quant.cc), and a mix of the two runs each part
// on its own.
#include "kernels/matmul.h"

#include "kernels/float/float_matmul.h"
#include "kernels/quant/quant.h"
#include "kernels/quant/quant_formats.h"

namespace weft {

bool project_with(KernelSet set, ThreadPool& pool, MatmulScratch& scratch, const float* in, int T, int K,
                  const MatmulPart* parts, int count) {
  int quantized = 0;
  for (int p = 0; p < count; ++p) quantized += is_quantized(parts[p].type) ? 1 : 0;
  if (quantized == count) return quant_project_with(set, pool, scratch, in, T, K, parts, count);
  if (quantized > 0) {  // float and block matrices together: each on its own
    for (int p = 0; p < count; ++p)
      if (!project_with(set, pool, scratch, in, T, K, &parts[p], 1)) return false;
    return true;
  }
  return float_project_with(set, pool, in, T, K, parts, count);
}

void project(ThreadPool& pool, MatmulScratch& scratch, const float* in, int T, int K, const MatmulPart* parts, int count) {
  int quantized = 0;
  for (int p = 0; p < count; ++p) quantized += is_quantized(parts[p].type) ? 1 : 0;
  if (quantized == count) return quant_project(pool, scratch, in, T, K, parts, count);
  if (quantized > 0) {
    for (int p = 0; p < count; ++p) project(pool, scratch, in, T, K, &parts[p], 1);
    return;
  }
  float_project(pool, in, T, K, parts, count);
}

void matmul(ThreadPool& pool, float* out, const float* in, const void* w, WeightType type, const float* bias, int T, int N,
            int K) {
  MatmulScratch scratch;
  MatmulPart part;
  part.out = out, part.w = w, part.type = type, part.bias = bias, part.N = N;
  project(pool, scratch, in, T, K, &part, 1);
}

bool matmul_with(KernelSet set, ThreadPool& pool, float* out, const float* in, const void* w, WeightType type,
                 const float* bias, int T, int N, int K) {
  if (is_quantized(type)) return false;
  MatmulScratch scratch;
  MatmulPart part;
  part.out = out, part.w = w, part.type = type, part.bias = bias, part.N = N;
  return project_with(set, pool, scratch, in, T, K, &part, 1);
}

}  // namespace weft
