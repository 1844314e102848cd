#!/bin/sh
# Builds the llguidance binding (bench only) when cargo is there; the bench skips llguidance otherwise.
set -e
here=$(dirname "$0")
if ! command -v cargo >/dev/null 2>&1; then echo "guided-engines: no cargo, llguidance skipped"; exit 0; fi
cd "$here/llguidance"
CARGO_TARGET_DIR=../.build/target cargo build --release --quiet
cp ../.build/target/release/libweft_bench_llguidance.so ../.build/llguidance.node
