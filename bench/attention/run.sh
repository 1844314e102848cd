#!/bin/sh
# Builds and runs bench/attention/harness.cc with the flags native/CMakeLists.txt uses.
# Arguments go to the harness (--rounds N, --check-exp).
set -e
cd "$(dirname "$0")/../.."
CXX=${CXX:-g++}
S=native/src/cpu; A=$S/kernels/attention; L=$S/kernels/activation; B=bench/attention; O=$(mktemp -d)
F="-O3 -std=c++17 -I$S -fno-math-errno -DWEFT_AVX2_KERNELS=1 -DWEFT_AVXVNNI_KERNELS=1 -DWEFT_AVX512VNNI_KERNELS=1 -DWEFT_AVX512_ATTENTION=1"
X86="-mavx2 -mfma -mf16c"
Z="-mavx512f -mavx512bw -mavx512vl"
$CXX $F -c $A/attention.cc -o $O/a.o &
$CXX $F $X86 -c $A/attention_avx2.cc -o $O/a2.o &
$CXX $F $X86 $Z -c $A/attention_avx512.cc -o $O/a5.o &
$CXX $F -c $S/base/cpu_features.cc -o $O/c.o &
$CXX $F -c $L/activation.cc -o $O/s.o &
$CXX $F $X86 -c $L/activation_avx2.cc -o $O/s2.o &
$CXX $F $X86 $Z -c $L/activation_avx512.cc -o $O/s5.o &
$CXX $F $X86 -c $B/old_avx2.cc -o $O/old.o &
$CXX $F $X86 -c $B/exp_avx2.cc -o $O/e2.o &
$CXX $F $X86 $Z -c $B/exp_avx512.cc -o $O/e5.o &
$CXX $F -c $B/harness.cc -o $O/h.o &
wait
$CXX $O/*.o -o $O/harness
${HARNESS_KEEP:+cp $O/harness $HARNESS_KEEP}
$O/harness "$@"
