// The run-time choice of kernel set (see cpu_features.h).
#include "base/cpu_features.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <string>
#include <utility>
#if defined(WEFT_AVX2_KERNELS)
#include <cpuid.h>
#endif
#if defined(WEFT_AMX_KERNELS) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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
  if (named) {
    if (std::string(named) == "amx") return KernelSet::Avx512Vnni;  // plus AMX (cpu_uses_amx)
    for (KernelSet s : kAllSets)
      if (std::string(named) == kernel_set_name(s)) return s;
  }
  return KernelSet::Avx512Vnni;  // unset or unknown: no limit
}

// Asks for the AMX tile state once per process (see cpu_amx_status).
AmxStatus probe_amx() {
  AmxStatus s;
#if defined(WEFT_AMX_EMULATE)  // bench/amx/run.sh --emulate: the tiles are plain C++
  s.usable = true;
  s.reason = "EMULATED tiles (bench/amx --emulate), not the real instructions";
  return s;
#endif
#if !defined(WEFT_AMX_KERNELS)
  s.reason = "this build has no AMX kernels (the compiler lacked -mamx-tile -mamx-int8)";
#else
  const CpuFlags f = cpu_flags();
  if (!f.amx_tile || !f.amx_int8) {
    s.reason = "the CPU has no AMX-INT8 (CPUID amx_tile, amx_int8)";
    return s;
  }
  if (!supported(KernelSet::Avx512Vnni)) {
    s.reason = "the AMX kernels need the avx512vnni set, which this CPU or OS does not run";
    return s;
  }
  // XCR0 bits 17 (XTILECFG) and 18 (XTILEDATA): the OS manages the tile state.
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) {  // OSXSAVE
    s.reason = "the OS does not enable XSAVE";
    return s;
  }
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & (3u << 17)) != (3u << 17)) {
    s.reason = "the OS does not enable the AMX tile state (XCR0 bits 17, 18)";
    return s;
  }
#if defined(__linux__)
  // Linux (5.16+) hands the 8 KB tile state to a process only on request;
  // without it the first tile instruction kills the process with SIGILL.
  constexpr int kArchGetXcompPerm = 0x1022, kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) {
    s.reason = std::string("Linux refused the AMX tile state (arch_prctl ARCH_REQ_XCOMP_PERM: ") + std::strerror(errno) + ")";
    return s;
  }
  unsigned long granted = 0;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &granted) != 0 || !(granted & (1ul << kXfeatureXtiledata))) {
    s.reason = "Linux did not grant the AMX tile state (arch_prctl ARCH_GET_XCOMP_PERM)";
    return s;
  }
  s.usable = true;
  s.reason = "AMX-INT8 tiles granted by Linux";
#else
  s.reason = "AMX is enabled on Linux only";
#endif
#endif
  return s;
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

// CPUID is asked once per set: a virtual machine traps it (14 us a call
// measured on the VM here, 2.7 ms per decode token when a matmul asked).
bool cpu_supports(KernelSet set) {
  static const bool table[] = {supported(KernelSet::Baseline), supported(KernelSet::Avx2), supported(KernelSet::AvxVnni),
                               supported(KernelSet::Avx512Vnni)};
  const size_t i = static_cast<size_t>(set);
  return i < sizeof(table) / sizeof(table[0]) && table[i];
}

AmxStatus cpu_amx_status() {
  static const AmxStatus status = probe_amx();
  return status;
}

bool cpu_amx_forced() {
  const char* named = std::getenv("WEFT_CPU_KERNELS");
  return named && std::string(named) == "amx" && !(std::getenv("WEFT_CPU_BASELINE") && std::string(std::getenv("WEFT_CPU_BASELINE")) == "1");
}

bool cpu_uses_amx() {
  static const bool uses = [] {
    const char* named = std::getenv("WEFT_CPU_KERNELS");
    const bool allowed = cpu_amx_forced() || !named || std::string(named) == "" ||
                         std::none_of(std::begin(kAllSets), std::end(kAllSets),
                                      [&](KernelSet s) { return std::string(named) == kernel_set_name(s); });
    return allowed && cpu_kernel_set() == KernelSet::Avx512Vnni && cpu_amx_status().usable;
  }();
  return uses;
}

CpuFlags cpu_flags() {
  CpuFlags f;
#if defined(WEFT_AVX2_KERNELS)
  unsigned a, b, c, d;
  if (__get_cpuid(0, &a, &b, &c, &d)) f.intel = b == 0x756e6547 && d == 0x49656e69 && c == 0x6c65746e;  // "Genu" "ineI" "ntel"
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
