#!/bin/sh
# Builds and runs bench/quant-kernels/harness.cc with the flags native/CMakeLists.txt uses.
set -e
cd "$(dirname "$0")/../.."
CXX=${CXX:-g++}
S=native/src/cpu; Q=$S/kernels/quant; K=$Q/kquant; O=$(mktemp -d)
F="-O3 -std=c++17 -I$S -DWEFT_AVX2_KERNELS=1 -DWEFT_AVXVNNI_KERNELS=1 -DWEFT_AVX512VNNI_KERNELS=1"
$CXX $F -ffp-contract=off -c $Q/quant.cc -o $O/q.o
[ -f $K/quant_k.cc ] && $CXX $F -ffp-contract=off -c $K/quant_k.cc -o $O/qk.o
$CXX $F -c $Q/quant_repack.cc -o $O/r.o
$CXX $F -c $S/base/cpu_features.cc -o $O/c.o
$CXX $F -c $S/base/thread_pool.cc -o $O/t.o
$CXX $F -mavx2 -mfma -mf16c -ffp-contract=off -c $Q/quant_avx2.cc -o $O/a.o
$CXX $F -mavx2 -mfma -mf16c -mavxvnni -ffp-contract=off -c $Q/quant_avxvnni.cc -o $O/v.o
$CXX $F -mavx2 -mfma -mf16c -mavx512f -mavx512bw -mavx512vl -mavx512vnni -ffp-contract=off -c $Q/quant_avx512vnni.cc -o $O/z.o
if [ -f $K/quant_k.cc ]; then
  $CXX $F -mavx2 -mfma -mf16c -ffp-contract=off -c $K/quant_k_avx2.cc -o $O/ka.o
  $CXX $F -mavx2 -mfma -mf16c -mavxvnni -ffp-contract=off -c $K/quant_k_avxvnni.cc -o $O/kv.o
  $CXX $F -mavx2 -mfma -mf16c -mavx512f -mavx512bw -mavx512vl -mavx512vnni -ffp-contract=off -c $K/quant_k_avx512vnni.cc -o $O/kz.o
fi
$CXX $F -c ${HARNESS:-bench/quant-kernels/harness.cc} -o $O/h.o
$CXX $O/*.o -o $O/harness -lpthread
$O/harness "$@"
