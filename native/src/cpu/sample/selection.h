// top-k and top-p's partial selections (src/sampling/selection.ts, selectBest
// and selectMass) over draw()'s candidates, leaving the very arrangement the
// JS leaves in the prefix the draw walks: the same quickselect, the same pivot
// stream, the same Lomuto partition (sampler.h says why every bit matters).
//
// What is faster than the JS loop, and why it is the same: a partition first
// only gathers the entries ordered before its pivot, in order (vectorised:
// selection_avx2.cc, selection_avx512.cc). When the selection then
// descends into them, or stops, that is all the JS arrangement it ever reads
// again: the Lomuto loop leaves the "before" entries in their order at the
// front, the pivot next, and the rest is not looked at. Only a descent into
// the rest needs the loop's exact arrangement of it, computed then (partition()).
#pragma once
#include <cstdint>

#include "sample/exp_rows.h"
#include "sample/sampler.h"

namespace weft {

// A selection's work buffer, at least n + 8 entries (SamplerScratch keeps it): a partition's gathered
// "before" entries, which are used up before arrange() (selection.cc) needs it for its f.
using SelectionBuffer = SamplerScratch::Candidate*;

// selectBest(): the best k of c[0..n) (0 < k < n) into c[0..k), arranged as the JS leaves them.
int32_t select_best(SampleKernels kernels, SamplerScratch::Candidate* c, int32_t n, int32_t k, SelectionBuffer work);

// selectMass(): the shortest best prefix of c[0..n) weighing at least `mass`; returns its length L
// (at least 1). *total: c[0..L)'s weights added in order from 0 (draw()'s total after top-p, without
// a pass of its own: the prefix only grows at its end, so its sum is carried along).
int32_t select_mass(SampleKernels kernels, SamplerScratch::Candidate* c, int32_t n, double mass, SelectionBuffer work,
                    double* total);

// The entries of c[lo, end) ordered before (pw, pid) ("higher weight first, lower id on ties"),
// in their order, into out; returns how many. out has room for end - lo + 8 entries.
int32_t gather_before(SampleKernels kernels, const SamplerScratch::Candidate* c, int32_t lo, int32_t end, double pw, int32_t pid,
                      SamplerScratch::Candidate* out);
#if defined(WEFT_AVX2_KERNELS)
int32_t gather_before_avx2(const SamplerScratch::Candidate* c, int32_t lo, int32_t end, double pw, int32_t pid,
                           SamplerScratch::Candidate* out);
#endif
#if defined(WEFT_AVX512_SAMPLE_KERNELS)
int32_t gather_before_avx512(const SamplerScratch::Candidate* c, int32_t lo, int32_t end, double pw, int32_t pid,
                             SamplerScratch::Candidate* out);
#endif

}  // namespace weft
