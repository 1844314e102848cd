// One token of the gated delta rule on one value head (linear_attention.cc),
// built like the activations: baseline (delta_rule.cc), AVX2 and AVX-512
// (delta_rule_avx2.cc, delta_rule_avx512.cc), the same loops
// (delta_rule_body.h) compiled for wider vectors, without FMA contraction: each
// element goes through the same float operations in the same order in every
// set, so every set gives the same bits. Picked once by the process's kernel
// set (cpu_features.h).
#pragma once
#include "base/cpu_features.h"

namespace weft {

// With S the head's state [Dk][Dv] (row-major), per element, in this order:
//   S *= decay;  kv = S^T k;  delta = beta * (v - kv);  S += k (x) delta;  o = S^T q
// kv is scratch of Dv floats; o receives Dv floats.
using DeltaRuleFn = void (*)(float* S, const float* q, const float* k, const float* v, float decay, float beta, int Dk, int Dv,
                             float* kv, float* o);

// The kernel of this process's kernel set.
DeltaRuleFn delta_rule_kernel();
// The kernel of a set; nullptr when this build or CPU cannot run it.
DeltaRuleFn delta_rule_kernel_of(KernelSet set);

void delta_rule_baseline(float* S, const float* q, const float* k, const float* v, float decay, float beta, int Dk, int Dv, float* kv, float* o);
void delta_rule_avx2(float* S, const float* q, const float* k, const float* v, float decay, float beta, int Dk, int Dv, float* kv, float* o);
void delta_rule_avx512(float* S, const float* q, const float* k, const float* v, float decay, float beta, int Dk, int Dv, float* kv, float* o);

}  // namespace weft
