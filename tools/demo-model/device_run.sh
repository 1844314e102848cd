#!/bin/bash
# What one device call runs (from the repository root): checks, a smoke run, the real training,
# the evaluation. Results land in $OUT.
# Usage: bash tools/demo-model/device_run.sh STEPS CONVERSATIONS [MAX_MINUTES [train.py options: --shape target ...]]
set -e
export PYTHONUNBUFFERED=1
STEPS=${1:-6000}; CONVS=${2:-80000}
cd tools/demo-model
python3 check_hf.py ../../models/weft-demo heldout.jsonl 2>&1 | grep -v -i warn || true
mkdir -p /tmp/smoke /tmp/m
cp ../../models/weft-demo/tokenizer*.json /tmp/smoke/; cp ../../models/weft-demo/tokenizer*.json /tmp/m/
python3 train.py --out /tmp/smoke --steps 20 --conversations 300 "${@:4}" > /tmp/smoke.log 2>&1 || { cat /tmp/smoke.log; exit 1; }
python3 evaluate.py --model /tmp/smoke --heldout heldout.jsonl --limit 4 > /tmp/smoke_eval.log 2>&1 || { cat /tmp/smoke_eval.log; exit 1; }
echo "smoke run ok"
python3 train.py --out /tmp/m --steps $STEPS --conversations $CONVS --max-minutes ${3:-5} "${@:4}" 2>&1 | grep -v -i warn | tee $OUT/train.txt
python3 evaluate.py --model /tmp/m --heldout heldout.jsonl --out $OUT/eval.json 2>&1 | grep -v -i warn | head -60
cp /tmp/m/model.safetensors /tmp/m/config.json /tmp/m/generation_config.json /tmp/m/train_log.json $OUT/
