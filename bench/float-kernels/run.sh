#!/bin/sh
# Builds and runs bench/float-kernels/harness.cc with the flags native/CMakeLists.txt uses.
# Arguments go to the harness (--quick: small shapes only). HARNESS=file.cc builds another
# harness against the same objects (bench/few-rows).
set -e
cd "$(dirname "$0")/../.."
CXX=${CXX:-g++}
S=native/src/cpu; M=$S/kernels/float; O=$(mktemp -d)
F="-O3 -std=c++17 -I$S -DWEFT_AVX2_KERNELS=1 -DWEFT_AVXVNNI_KERNELS=1 -DWEFT_AVX512VNNI_KERNELS=1 -DWEFT_AVX512_FLOAT_KERNELS=1"
X86="-mavx2 -mfma -mf16c"
Z="-mavx512f -mavx512bw -mavx512vl"
$CXX $F -c $S/kernels/matmul.cc -o $O/m.o &
$CXX $F -c $M/float_matmul.cc -o $O/mf.o &
$CXX $F $X86 -c $M/matmul_avx2.cc -o $O/m2.o &
$CXX $F $X86 $Z -c $M/matmul_avx512.cc -o $O/m5.o &
$CXX $F -c $S/base/cpu_features.cc -o $O/c.o &
wait
# kernels/matmul.cc hands block formats to the quantized kernels: every quant*.cc, flags by its suffix.
for f in $(find $S/kernels/quant -name 'quant*.cc'); do
  case $f in
    *_avx512vnni.cc) X="$X86 $Z -mavx512vnni" ;;
    *_avxvnni.cc) X="$X86 -mavxvnni" ;;
    *_avx2.cc) X="$X86" ;;
    *) X="" ;;
  esac
  $CXX $F $X -ffp-contract=off -c $f -o $O/$(basename $f .cc).o &
done
wait
$CXX $F -c $S/base/thread_pool.cc -o $O/t.o
$CXX $F -c ${HARNESS:-bench/float-kernels/harness.cc} -o $O/h.o
$CXX $O/*.o -o $O/harness -lpthread
$O/harness "$@"
