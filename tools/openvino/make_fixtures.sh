#!/usr/bin/env bash
# Rebuilds every committed OpenVINO IR fixture (needs only: pip install openvino==2026.4.1 numpy).
set -euo pipefail
cd "$(dirname "$0")/../.."
for weights in f32 int8 int4; do
  python3 tools/openvino/make_ir.py --model models/weft-demo --out "models/weft-demo-openvino/$weights" --weights "$weights"
  python3 tools/openvino/make_ir.py --model test/fixtures/qwen3-tiny --out "test/fixtures/qwen3-tiny-openvino/$weights" --weights "$weights"
done
