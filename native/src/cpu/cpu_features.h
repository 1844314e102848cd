// Which kernel set this process runs, decided once from the CPU (CPUID).
//
// Kernels for newer instruction sets live in their own files, built with those
// flags (CMakeLists.txt), and are called only when cpu_kernel_set() says the
// CPU has them. Each set includes the ones before it.
#pragma once
#include <string>

namespace weft {

enum class KernelSet {
  Baseline,    // the compiler's default target: any x86-64, any arm64
  Avx2,        // AVX2 + FMA + F16C: float matmul and attention, int8 dot products via maddubs
  AvxVnni,     // + AVX-VNNI: int8 dot products with vpdpbusd (VEX, 256-bit)
  Avx512Vnni,  // + AVX-512 F/BW/VL/VNNI: vpdpbusd (EVEX, 256-bit lanes)
};

// The set for this process: the best the CPU supports, or the one forced by
// WEFT_CPU_KERNELS=baseline|avx2|avxvnni|avx512vnni or WEFT_CPU_BASELINE=1
// (= baseline). A forced set the CPU lacks becomes the best supported one
// below it, so it never runs an instruction the CPU lacks. Read once.
KernelSet cpu_kernel_set();

// The best set this CPU and build support, whatever is forced.
KernelSet cpu_best_kernel_set();

// Whether this CPU and build can run a set (tests run every supported one).
bool cpu_supports(KernelSet set);

// "baseline", "avx2", "avxvnni" or "avx512vnni".
const char* kernel_set_name(KernelSet set);

// Whether the AVX2/FMA/F16C float kernels run (every set above Baseline).
// (The float matmul of the avx512vnni set uses AVX-512 instead, matmul.cc.)
inline bool cpu_uses_avx2() { return cpu_kernel_set() != KernelSet::Baseline; }

// What CPUID reports, for benchmarks and logs to name (all false off x86-64).
// weft has kernels for some of these only: see docs/cpu-backend.md. The AMX
// bits say what the CPU has; using AMX on Linux would also need the kernel's
// permission (arch_prctl ARCH_REQ_XCOMP_PERM), which nothing here asks for.
struct CpuFlags {
  bool avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512_vnni = false, avx512_bf16 = false,
       avx512_fp16 = false;
  bool avx_vnni = false;
  bool amx_tile = false, amx_int8 = false, amx_bf16 = false;
};
CpuFlags cpu_flags();

// The flags that are set, comma-separated (/proc/cpuinfo's names).
std::string cpu_flag_names(const CpuFlags& flags);

}  // namespace weft
