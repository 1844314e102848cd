#!/bin/sh
# Builds and runs bench/amx/harness.cc with the flags native/CMakeLists.txt uses
# (the kernels' own sources, no node). Arguments go to the harness (--quick).
# WEFT_AMX_HARNESS_OUT=path: only build, to that file (e.g. -static for a
# machine without a compiler: WEFT_AMX_LDFLAGS=-static).
set -e
cd "$(dirname "$0")/../.."
CXX=${CXX:-g++}
S=native/src/cpu; O=$(mktemp -d)
trap 'rm -rf "$O"' EXIT
F="-O3 -std=c++17 -I$S -fno-math-errno -DWEFT_AVX2_KERNELS=1 -DWEFT_AVXVNNI_KERNELS=1 -DWEFT_AVX512VNNI_KERNELS=1 -DWEFT_AMX_KERNELS=1"
F="$F ${WEFT_AMX_CXXFLAGS:-}"  # extra flags, e.g. -DNAME=VALUE for a tuning build
if [ "$1" = "--emulate" ]; then F="$F -DWEFT_AMX_EMULATE=1"; shift; fi
X86="-mavx2 -mfma -mf16c"
Z="-mavx512f -mavx512bw -mavx512vl"
for f in $(find $S/kernels/quant -name 'quant*.cc'); do
  case $f in
    *_amx.cc) X="$X86 $Z -mavx512vnni -mamx-tile -mamx-int8" ;;
    *_avx512vnni.cc) X="$X86 $Z -mavx512vnni" ;;
    *_avxvnni.cc) X="$X86 -mavxvnni" ;;
    *_avx2.cc) X="$X86" ;;
    *) X="" ;;
  esac
  $CXX $F $X -ffp-contract=off -c $f -o $O/$(basename $f .cc).o &
done
$CXX $F -c $S/base/cpu_features.cc -o $O/cpu_features.o &
$CXX $F -c $S/base/thread_pool.cc -o $O/thread_pool.o &
$CXX $F -c bench/amx/harness.cc -o $O/harness.o &
wait
BIN=${WEFT_AMX_HARNESS_OUT:-$O/harness}
$CXX $O/*.o -o "$BIN" ${WEFT_AMX_LDFLAGS:-} -lpthread
[ -n "$WEFT_AMX_HARNESS_OUT" ] && exit 0
"$BIN" "$@"
