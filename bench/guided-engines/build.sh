#!/bin/sh
# Builds the llguidance binding (bench only: never part of weft) when cargo is there; without cargo,
# or when the build fails (no crates.io), the bench runs without llguidance and says so.
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v cargo >/dev/null 2>&1; then echo "guided-engines: no cargo, llguidance skipped"; exit 0; fi
if (cd "$here/llguidance" && CARGO_TARGET_DIR="$here/.build/target" cargo build --release --quiet); then
  # A cdylib is .so on Linux, .dylib on macOS; Node loads either as a .node file.
  lib=$(ls "$here"/.build/target/release/libweft_bench_llguidance.so "$here"/.build/target/release/libweft_bench_llguidance.dylib 2>/dev/null | head -n 1)
  cp "$lib" "$here/.build/llguidance.node"
else
  echo "guided-engines: the llguidance build failed, llguidance skipped"
  rm -f "$here/.build/llguidance.node"
fi
