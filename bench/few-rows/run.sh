#!/bin/sh
# Builds and runs bench/few-rows/harness.cc against the matmul kernels (bench/float-kernels/run.sh builds them).
cd "$(dirname "$0")/../.." && HARNESS=bench/few-rows/harness.cc exec sh bench/float-kernels/run.sh "$@"
