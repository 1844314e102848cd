#!/bin/sh
# Builds and runs bench/float-kernels/harness.cc with the flags native/CMakeLists.txt uses.
# Arguments go to the harness (--quick: small shapes only).
set -e
cd "$(dirname "$0")/../.."
CXX=${CXX:-g++}
S=native/src/cpu; O=$(mktemp -d)
F="-O3 -std=c++17 -DWEFT_AVX2_KERNELS=1 -DWEFT_AVXVNNI_KERNELS=1 -DWEFT_AVX512VNNI_KERNELS=1 -DWEFT_AVX512_FLOAT_KERNELS=1"
X86="-mavx2 -mfma -mf16c"
Z="-mavx512f -mavx512bw -mavx512vl"
$CXX $F -c $S/matmul.cc -o $O/m.o &
$CXX $F $X86 -c $S/matmul_avx2.cc -o $O/m2.o &
$CXX $F $X86 $Z -c $S/matmul_avx512.cc -o $O/m5.o &
$CXX $F -ffp-contract=off -c $S/quant.cc -o $O/q.o &
wait
$CXX $F $X86 -ffp-contract=off -c $S/quant_avx2.cc -o $O/a.o &
$CXX $F $X86 -mavxvnni -ffp-contract=off -c $S/quant_avxvnni.cc -o $O/v.o &
$CXX $F $X86 $Z -mavx512vnni -ffp-contract=off -c $S/quant_avx512vnni.cc -o $O/z.o &
$CXX $F -c $S/cpu_features.cc -o $O/c.o &
wait
$CXX $F -c $S/thread_pool.cc -o $O/t.o
$CXX $F -c bench/float-kernels/harness.cc -o $O/h.o
$CXX $O/*.o -o $O/harness -lpthread
$O/harness "$@"
