// The partial selections (see selection.h). Each step mirrors a line of
// src/sampling/selection.ts; the comments say which.
#include "sample/selection.h"

#include <cstring>
#include <utility>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace weft {
namespace {

using Candidate = SamplerScratch::Candidate;

// Pivot stream: xorshift32 restarted at every selection (PIVOT_SEED).
constexpr uint32_t kPivotSeed = 0x9e3779b9u;
inline uint32_t next_pivot(uint32_t& state) {
  state ^= state << 13;
  state ^= state >> 17;
  state ^= state << 5;
  return state;
}

// "Higher weight first, lower id on ties".
// Bitwise, not ||: the comparison is a coin toss for the branch predictor.
inline bool before(const Candidate& a, double pw, int32_t pid) {
  return static_cast<bool>(static_cast<int>(a.weight > pw) | (static_cast<int>(a.weight == pw) & static_cast<int>(a.id < pid)));
}

// partition()'s first lines: the pivot drawn from the stream, swapped to hi - 1.
inline Candidate take_pivot(Candidate* c, int32_t lo, int32_t hi, uint32_t& state) {
  const int32_t p = lo + static_cast<int32_t>(next_pivot(state) % static_cast<uint32_t>(hi - lo));
  std::swap(c[p], c[hi - 1]);
  return c[hi - 1];
}

// What the Lomuto loop leaves in [lo, at]: the `count` gathered "before" entries, then the pivot.
// Enough for a selection that descends into [lo, at) or stops at at + 1 (selection.h).
inline void place_befores(Candidate* c, int32_t lo, const Candidate* befores, int32_t count, const Candidate& pivot) {
  std::memcpy(c + lo, befores, static_cast<size_t>(count) * sizeof(Candidate));
  c[lo + count] = pivot;
}

// partition()'s loop with the very arrangement of [lo, hi) the JS loop leaves,
// the pivot at hi - 1 already and `count` entries ordered before it (gathered
// already), computed without its chain of dependent swaps.
// What that loop leaves, for the entries a[lo .. hi - 1) it scans:
//  - the entries ordered before the pivot ("before"), in their order, at [lo, S);
//  - at each position p >= S, f(p): what position p held right after the loop's
//    step p. That is a[p] when a[p] is not "before", and otherwise what position
//    s(p) = lo + (the number of "before" entries in [lo, p)) held, which is
//    f(s(p)) (untouched since its own step, s(p) < p);
//  then its last swap puts the pivot at S and f(S) at hi - 1.
// A "before" entry at p >= S has s(p) < S (the befores are S - lo in all), so
// f on [S, hi - 1) reads only f on [lo, S): one sequential pass over [lo, S)
// computes f there into `tmp` (each read of tmp an earlier entry), and each
// f(p), p >= S, is then one lookup, with no chain from one p to the next; both
// passes compact the "before" entries in place. Returns S.
int32_t arrange(Candidate* c, int32_t lo, int32_t hi, int32_t count, Candidate* tmp) {
  const Candidate pivot = c[hi - 1];
  const double pw = pivot.weight;
  const int32_t pid = pivot.id;
  const int32_t end = hi - 1, at = lo + count;
  int32_t store = lo;
  Candidate* f = tmp - lo;  // f[q] for q in [lo, at)
  for (int32_t q = lo; q < at; ++q) {
    const Candidate x = c[q];
    const bool b = before(x, pw, pid);
    // store == q: every entry so far was "before", the loop swaps x with itself, f[q] is x.
    const bool moved = b & (store < q);
#if defined(__SSE2__)
    const __m128i xv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + q));
    const __m128i fv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(f + store));
    const __m128i m = _mm_set1_epi32(-static_cast<int32_t>(moved));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(f + q), _mm_or_si128(_mm_and_si128(m, fv), _mm_andnot_si128(m, xv)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(c + store), xv);
#else
    f[q] = moved ? f[store] : x;
    c[store] = x;
#endif
    store += b;
  }
  // f(at) goes to hi - 1, whose entry (the pivot) is saved; the others stay where they are.
  // The "before" entries at p >= S still join the compacted front (at store < S; a write at
  // store == S, of an entry that is not "before", is overwritten by the pivot below).
  Candidate last = pivot;
  if (at < end) {
    const Candidate x = c[at];
    const bool b = before(x, pw, pid);
    last = b ? f[store] : x;
    c[store] = x;
    store += b;
  }
  for (int32_t p = at + 1; p < end; ++p) {
    const bool b = before(c[p], pw, pid);
#if defined(__SSE2__)
    const __m128i xv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + p));
    const __m128i fv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(f + store));
    const __m128i m = _mm_set1_epi32(-static_cast<int32_t>(b));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(c + p), _mm_or_si128(_mm_and_si128(m, fv), _mm_andnot_si128(m, xv)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(c + store), xv);
#else
    const Candidate x = c[p];
    if (b) c[p] = f[store];
    c[store] = x;
#endif
    store += b;
  }
  c[end] = last;
  c[at] = pivot;
  return at;
}

}  // namespace

int32_t gather_before(SampleKernels kernels, const Candidate* c, int32_t lo, int32_t end, double pw, int32_t pid, Candidate* out) {
#if defined(WEFT_AVX512_SAMPLE_KERNELS)
  if (kernels == SampleKernels::Avx512) return gather_before_avx512(c, lo, end, pw, pid, out);
#endif
#if defined(WEFT_AVX2_KERNELS)
  if (kernels == SampleKernels::Avx2) return gather_before_avx2(c, lo, end, pw, pid, out);
#endif
  (void)kernels;
  int32_t count = 0;
  for (int32_t q = lo; q < end; ++q) {
    const Candidate x = c[q];  // compared before the store: out cannot alias c, but the compiler would reload
    const bool b = before(x, pw, pid);
    out[count] = x;  // kept only when it is "before": no branch
    count += b;
  }
  return count;
}

int32_t select_best(SampleKernels kernels, Candidate* c, int32_t n, int32_t k, SelectionBuffer work) {
  uint32_t state = kPivotSeed;
  int32_t lo = 0, hi = n;
  // Invariant: [0, lo) are all in the best k, [hi, n) all outside it.
  while (hi - lo > 1) {
    const Candidate pivot = take_pivot(c, lo, hi, state);
    const int32_t count = gather_before(kernels, c, lo, hi - 1, pivot.weight, pivot.id, work);
    const int32_t at = lo + count;
    if (at + 1 >= k) {  // stop at k, or descend into the "before" entries
      place_befores(c, lo, work, count, pivot);
      if (at + 1 == k) return k;
      hi = at;
      continue;
    }
    arrange(c, lo, hi, count, work);
    lo = at + 1;
  }
  return k;
}

int32_t select_mass(SampleKernels kernels, Candidate* c, int32_t n, double mass, SelectionBuffer work, double* total) {
  uint32_t state = kPivotSeed;
  int32_t lo = 0, hi = n;
  double need = mass;
  double prefix = 0;  // c[0..lo)'s weights added in order from 0
  // Invariant: [0, lo) are in the prefix and weigh mass - need; the prefix ends in [lo, hi].
  while (hi > lo) {
    const Candidate pivot = take_pivot(c, lo, hi, state);
    const Candidate* befores = work;
    const int32_t count = gather_before(kernels, c, lo, hi - 1, pivot.weight, pivot.id, work);
    const int32_t at = lo + count;
    // selectMass's `before` (from 0), and the prefix's sum should [lo, at) join it: two independent chains.
    double sum_before = 0, grown = prefix;
    for (int32_t i = 0; i < count; ++i) {
      sum_before += befores[i].weight;
      grown += befores[i].weight;
    }
    if (sum_before >= need) {
      place_befores(c, lo, befores, count, pivot);
      hi = at;
      continue;
    }
    need -= sum_before;
    if (pivot.weight >= need) {
      place_befores(c, lo, befores, count, pivot);
      *total = grown + pivot.weight;
      return at + 1;
    }
    need -= pivot.weight;
    arrange(c, lo, hi, count, work);  // after the last read of befores: the same buffer
    prefix = grown + pivot.weight;
    lo = at + 1;
  }
  // Math.max(lo, 1): lo == 0 only after descents into nothing, where c[0] is the last pivot.
  *total = lo > 0 ? prefix : 0 + c[0].weight;
  return lo > 1 ? lo : 1;
}

}  // namespace weft
