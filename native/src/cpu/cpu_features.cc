// The run-time choice of kernel set (see cpu_features.h).
#include "cpu_features.h"

#include <cstdlib>
#include <string>
#if defined(WEFT_AVX2_KERNELS)
#include <cpuid.h>
#endif

namespace weft {
namespace {

// The best set this CPU (and this build) supports.
KernelSet best_supported() {
#if defined(WEFT_AVX2_KERNELS)
  __builtin_cpu_init();
  unsigned eax, ebx, ecx = 0, edx;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29));  // CPUID.1:ECX.F16C
  if (f16c && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return KernelSet::Avx2;
#endif
  return KernelSet::Baseline;
}

// The set named by WEFT_CPU_KERNELS / WEFT_CPU_BASELINE, or `best` when none is.
KernelSet requested(KernelSet best) {
  const char* baseline = std::getenv("WEFT_CPU_BASELINE");
  if (baseline && std::string(baseline) == "1") return KernelSet::Baseline;
  const char* named = std::getenv("WEFT_CPU_KERNELS");
  if (!named) return best;
  for (KernelSet s : {KernelSet::Baseline, KernelSet::Avx2, KernelSet::AvxVnni, KernelSet::Avx512Vnni})
    if (std::string(named) == kernel_set_name(s)) return s;
  return best;  // an unknown name changes nothing
}

}  // namespace

const char* kernel_set_name(KernelSet set) {
  switch (set) {
    case KernelSet::Baseline: return "baseline";
    case KernelSet::Avx2: return "avx2";
    case KernelSet::AvxVnni: return "avxvnni";
    case KernelSet::Avx512Vnni: return "avx512vnni";
  }
  return "baseline";
}

KernelSet cpu_kernel_set() {
  static const KernelSet chosen = [] {
    const KernelSet best = best_supported();
    const KernelSet want = requested(best);
    return static_cast<int>(want) < static_cast<int>(best) ? want : best;
  }();
  return chosen;
}

}  // namespace weft
