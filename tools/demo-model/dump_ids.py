"""Adds reference token ids to renders.jsonl lines: python3 dump_ids.py tokenizer.json in out"""
import json
import sys

from bpe_encode import ReferenceBPE

bpe = ReferenceBPE(sys.argv[1])
with open(sys.argv[3], "w") as out:
    for line in open(sys.argv[2]):
        c = json.loads(line)
        c["ids"] = bpe.encode(c["text"])
        out.write(json.dumps(c) + "\n")
