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
// (The float matmul of the avx512vnni set uses AVX-512 instead, kernels/float/float_matmul.cc.)
inline bool cpu_uses_avx2() { return cpu_kernel_set() != KernelSet::Baseline; }

// AMX-INT8 tiles (Intel Sapphire Rapids and later): not a kernel set of their
// own but an addition to avx512vnni, used for the Q8_0 row-group matmuls of
// kAmxMinTokens or more tokens (quant_amx.h; fewer tokens, Q4_0 and every
// other matmul keep the avx512vnni kernels). Usable when this build has the
// kernels (WEFT_AMX_KERNELS), CPUID says amx_tile + amx_int8, the avx512vnni
// set runs, XCR0 enables the tile state and Linux grants it to the process
// (arch_prctl ARCH_REQ_XCOMP_PERM, asked once, here).
struct AmxStatus {
  bool usable = false;
  std::string reason;  // why not, or what was granted
};
AmxStatus cpu_amx_status();

// Whether this process runs the AMX kernels: usable, the kernel set is
// avx512vnni, and WEFT_CPU_KERNELS is unset or "amx" (any other forced set,
// avx512vnni included, turns AMX off, so the sets can be compared).
bool cpu_uses_amx();

// Whether WEFT_CPU_KERNELS=amx asks for AMX. Where AMX is not usable the
// native model refuses to be created (binding.cc) rather than silently run
// without it.
bool cpu_amx_forced();

// What CPUID reports, for benchmarks and logs to name (all false off x86-64).
// weft has kernels for some of these only: see docs/cpu-backend.md.
struct CpuFlags {
  bool intel = false;  // CPUID vendor "GenuineIntel"
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
