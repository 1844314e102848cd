// The run-time choice of kernel set (see cpu_features.h).
#include "cpu_features.h"

#include <cstdlib>
#include <string>
#include <utility>
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

CpuFlags cpu_flags() {
  CpuFlags f;
#if defined(WEFT_AVX2_KERNELS)
  unsigned a, b, c, d;
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    f.fma = c & (1u << 12);
    f.f16c = c & (1u << 29);
  }
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    f.avx2 = b & (1u << 5);
    f.avx512f = b & (1u << 16);
    f.avx512bw = b & (1u << 30);
    f.avx512vl = b & (1u << 31);
    f.avx512_vnni = c & (1u << 11);
    f.amx_bf16 = d & (1u << 22);
    f.avx512_fp16 = d & (1u << 23);
    f.amx_tile = d & (1u << 24);
    f.amx_int8 = d & (1u << 25);
  }
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) {
    f.avx_vnni = a & (1u << 4);
    f.avx512_bf16 = a & (1u << 5);
  }
#endif
  return f;
}

std::string cpu_flag_names(const CpuFlags& f) {
  const std::pair<bool, const char*> named[] = {
      {f.avx2, "avx2"},         {f.fma, "fma"},           {f.f16c, "f16c"},
      {f.avx512f, "avx512f"},   {f.avx512bw, "avx512bw"}, {f.avx512vl, "avx512vl"},
      {f.avx512_vnni, "avx512_vnni"}, {f.avx512_bf16, "avx512_bf16"}, {f.avx512_fp16, "avx512_fp16"},
      {f.avx_vnni, "avx_vnni"}, {f.amx_tile, "amx_tile"}, {f.amx_int8, "amx_int8"},
      {f.amx_bf16, "amx_bf16"}};
  std::string out;
  for (const auto& [on, name] : named)
    if (on) out += (out.empty() ? "" : ", ") + std::string(name);
  return out.empty() ? "none" : out;
}

}  // namespace weft
