// The run-time choice of kernel set (see cpu_features.h).
#include "cpu_features.h"

#include <cstdlib>
#include <string>
#if defined(WEFT_AVX2_KERNELS)
#include <cpuid.h>
#endif

namespace weft {
namespace {

constexpr KernelSet kAllSets[] = {KernelSet::Baseline, KernelSet::Avx2, KernelSet::AvxVnni, KernelSet::Avx512Vnni};

// Whether this CPU can run a set's instructions and this build has its kernels.
bool supported(KernelSet set) {
  if (set == KernelSet::Baseline) return true;
#if defined(WEFT_AVX2_KERNELS)
  __builtin_cpu_init();
  unsigned eax, ebx, ecx = 0, edx;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29));  // CPUID.1:ECX.F16C
  const bool avx2 = f16c && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (set == KernelSet::Avx2) return avx2;
#if defined(WEFT_AVXVNNI_KERNELS)
  if (set == KernelSet::AvxVnni) return avx2 && __builtin_cpu_supports("avxvnni");
#endif
#if defined(WEFT_AVX512VNNI_KERNELS)
  // __builtin_cpu_supports checks that the OS saves the AVX-512 state too.
  if (set == KernelSet::Avx512Vnni)
    return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
#endif
#endif
  return false;
}

// The best supported set at or below `limit` (the sets are not a chain: a CPU
// may have AVX512-VNNI without AVX-VNNI, or the reverse).
KernelSet best_up_to(KernelSet limit) {
  KernelSet best = KernelSet::Baseline;
  for (KernelSet s : kAllSets)
    if (static_cast<int>(s) <= static_cast<int>(limit) && supported(s)) best = s;
  return best;
}

// The set named by WEFT_CPU_KERNELS / WEFT_CPU_BASELINE, or the last one when none is.
KernelSet requested() {
  const char* baseline = std::getenv("WEFT_CPU_BASELINE");
  if (baseline && std::string(baseline) == "1") return KernelSet::Baseline;
  const char* named = std::getenv("WEFT_CPU_KERNELS");
  if (named)
    for (KernelSet s : kAllSets)
      if (std::string(named) == kernel_set_name(s)) return s;
  return KernelSet::Avx512Vnni;  // unset or unknown: no limit
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

KernelSet cpu_best_kernel_set() {
  static const KernelSet best = best_up_to(KernelSet::Avx512Vnni);
  return best;
}

KernelSet cpu_kernel_set() {
  static const KernelSet chosen = best_up_to(requested());
  return chosen;
}

bool cpu_supports(KernelSet set) { return supported(set); }

}  // namespace weft
