/*
 * Which 256-bit integer operations share an execution port on this CPU: the
 * rate of each instruction alone (8 independent chains), and of pairs of them
 * interleaved (4 chains each). A pair that runs at the rate of one of its
 * halves uses two ports; one that takes as long as both shares a port.
 * Written for the k-quant kernels' AVX2 path (quant_k_group_kernels.h): on
 * the Zen 3 host of issue 14, vpmaddubsw and vpmaddwd shared one port.
 *
 *   cc -O2 -mavx2 bench/cpu-ports/ports.c -o /tmp/ports && /tmp/ports
 * x86-64 with AVX2 only. Timings are wall-clock: run it on an idle machine.
 */
#include <stdio.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

#define ITERATIONS 50000000L
#define OP(insn, k) insn " %%ymm8,%%ymm" #k ",%%ymm" #k "\n"
#define SHIFT(k) "vpsrlw $4,%%ymm" #k ",%%ymm" #k "\n"
#define CLOBBERS "rcx", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9"
/* Eight chains of one instruction (ymm1-7, ymm9), ymm8 the other operand. */
#define ALONE(name, A)                                                                                         \
  {                                                                                                            \
    const double t0 = now();                                                                                   \
    __asm__ volatile("vpxor %%ymm8,%%ymm8,%%ymm8\n mov %0,%%rcx\n 1:\n" A(1) A(2) A(3) A(4) A(5) A(6) A(7) A(9) \
                     "dec %%rcx\n jnz 1b\n" ::"r"(ITERATIONS) : CLOBBERS);                                    \
    printf("%-34s %5.2f ns per instruction\n", name, (now() - t0) / ITERATIONS / 8 * 1e9);                      \
  }
/* Four chains of A and four of B, interleaved. */
#define PAIR(name, A, B)                                                                                       \
  {                                                                                                            \
    const double t0 = now();                                                                                   \
    __asm__ volatile("vpxor %%ymm8,%%ymm8,%%ymm8\n mov %0,%%rcx\n 1:\n" A(1) B(5) A(2) B(6) A(3) B(7) A(4) B(9) \
                     "dec %%rcx\n jnz 1b\n" ::"r"(ITERATIONS) : CLOBBERS);                                    \
    printf("%-34s %5.2f ns per pair\n", name, (now() - t0) / ITERATIONS / 4 * 1e9);                            \
  }
#define MADDUBS(k) OP("vpmaddubsw", k)
#define MADDWD(k) OP("vpmaddwd", k)
#define MULLD(k) OP("vpmulld", k)
#define SIGNB(k) OP("vpsignb", k)
#define ADDD(k) OP("vpaddd", k)
#define AND(k) OP("vpand", k)

int main(void) {
  ALONE("vpmaddubsw", MADDUBS)
  ALONE("vpmaddwd", MADDWD)
  ALONE("vpmulld", MULLD)
  ALONE("vpsrlw", SHIFT)
  ALONE("vpsignb", SIGNB)
  ALONE("vpand", AND)
  PAIR("vpmaddubsw + vpmaddwd", MADDUBS, MADDWD)
  PAIR("vpmaddubsw + vpsrlw", MADDUBS, SHIFT)
  PAIR("vpmaddubsw + vpsignb", MADDUBS, SIGNB)
  PAIR("vpmaddubsw + vpaddd", MADDUBS, ADDD)
  return 0;
}
