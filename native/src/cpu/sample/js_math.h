// exp and log as JavaScript's Math.exp and Math.log compute them in Node's V8
// (src/base/ieee754.cc: fdlibm, the same operations in the same order), so the
// native sampler (sampler.h) gets the very doubles src/sampling/sampler.ts gets.
// A libm's exp may differ from fdlibm's in the last bit, and one bit of one
// weight can move a draw across a token boundary: "the same seed gives the
// same tokens" needs these.
//
// Only +, -, *, / and bit moves: compiled without FMA contraction (CMakeLists.txt
// builds native/src/cpu/sample with -ffp-contract=off), every kernel set agrees.
//
// log: V8 12.x (Node 22 and later) computes Math.log with LLVM's libc
// (correctly rounded) instead of fdlibm; the two differ in the last bit for a
// few inputs. The sampler uses log only where that cannot change a token: the
// reported log probabilities are computed in JavaScript from the sums the
// native side returns (see sample_rows).
#pragma once
#include <cstdint>
#include <cstring>

namespace weft {
namespace jsmath {

inline uint32_t high_word(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, 8);
  return static_cast<uint32_t>(bits >> 32);
}
inline uint32_t low_word(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, 8);
  return static_cast<uint32_t>(bits);
}
inline double from_words(uint32_t high, uint32_t low) {
  const uint64_t bits = (static_cast<uint64_t>(high) << 32) | low;
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

// fdlibm exp (e_exp.c as V8 has it).
double exp(double x);
// fdlibm log (e_log.c).
double log(double x);

}  // namespace jsmath
}  // namespace weft
