#!/usr/bin/env bash
# `npm run test:sanitize`: the native addon built with AddressSanitizer and
# UndefinedBehaviorSanitizer (into native/build-sanitize, beside the normal
# build), then the tests that drive it: any out-of-bounds access, use after
# free or undefined behaviour in native code aborts the run with a report.
#
# node itself is not instrumented, so the sanitizer runtimes are preloaded.
# Leak detection is off (node frees little at exit). The ulimit -v test is left
# out: ASan reserves terabytes of address space for its shadow memory.
set -euo pipefail
cd "$(dirname "$0")/.."
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"
npx cmake-js compile --directory native --out native/build-sanitize \
  --CDCMAKE_CXX_FLAGS="$flags" --CDCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >native/build-sanitize.log 2>&1 ||
  { tail -30 native/build-sanitize.log; exit 1; }
export LD_PRELOAD="$(g++ -print-file-name=libasan.so) $(g++ -print-file-name=libubsan.so)"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export WEFT_NATIVE_PATH="$PWD/native/build-sanitize/Release/weft_native.node"
npx vitest run test/native test/reliability --exclude test/native/native-exceptions.test.ts "$@"
