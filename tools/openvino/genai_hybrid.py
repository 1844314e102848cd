#!/usr/bin/env python3
"""The hybrid pressure scenario through openvino.genai's ContinuousBatchingPipeline (the engine OVMS
runs), on the same IR as weft's test/openvino/hybrid.test.ts. Recipe only (needs openvino-genai).

    pip install openvino==2026.4.1 openvino-genai==2026.4.1.0
    python3 tools/openvino/genai_hybrid.py --kv-blocks 20 --batched 256 --prefix-caching --multiplier 2 --new-tokens 64

16 greedy requests over the reference prompts (1 to 300 tokens; most repeat, so prefix caching
hits), requests 3, 8 and 13 cancelled mid-stream; every output compared with the same request run
alone-ish on an unpressured pipeline (512 KV blocks). Prints one line of JSON.
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import openvino as ov
import openvino_genai as genai

ROOT = Path(__file__).resolve().parents[2]


def pipeline(ir, kv_blocks, args):
    config = genai.SchedulerConfig()
    config.cache_size = 0
    config.num_kv_blocks = kv_blocks
    config.max_num_seqs = 16
    config.max_num_batched_tokens = args.batched
    config.enable_prefix_caching = args.prefix_caching
    if args.multiplier:
        config.cache_interval_multiplier = args.multiplier
    props = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32", "INFERENCE_NUM_THREADS": "2"}
    return genai.ContinuousBatchingPipeline(str(ir), config, "CPU", props)


def run(pipe, prompts, new_tokens, cancel):
    gen = genai.GenerationConfig()
    gen.max_new_tokens = new_tokens
    gen.ignore_eos = True
    gen.do_sample = False
    handles = [pipe.add_request(i, ov.Tensor(np.array([p], dtype=np.int64)), gen) for i, p in enumerate(prompts)]
    outs = [[] for _ in handles]
    steps = 0
    while pipe.has_non_finished_requests():
        pipe.step()
        steps += 1
        for i, h in enumerate(handles):
            if h.can_read():
                for o in h.read().values():
                    outs[i].extend(o.generated_ids)
            if i in cancel and len(outs[i]) >= 5 + i and str(h.get_status()).endswith("RUNNING"):
                h.cancel()
    return outs, [str(h.get_status()).split(".")[-1] for h in handles], steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ir", default=str(ROOT / "test/fixtures/qwen35-tiny-openvino"))
    ap.add_argument("--reference", default=str(ROOT / "test/fixtures/qwen35-tiny/reference.json"))
    ap.add_argument("--kv-blocks", type=int, default=20)
    ap.add_argument("--batched", type=int, default=256)
    ap.add_argument("--prefix-caching", action="store_true")
    ap.add_argument("--multiplier", type=int, default=0, help="cache_interval_multiplier (0: genai's adaptive default)")
    ap.add_argument("--new-tokens", type=int, default=64)
    args = ap.parse_args()
    cases = json.load(open(args.reference))["cases"]
    prompts = [cases[(i * 5) % len(cases)]["prompt_ids"] for i in range(16)]
    cancel = {3, 8, 13}
    base, _, _ = run(pipeline(args.ir, 512, args), prompts, args.new_tokens, set())
    t = time.time()
    try:
        outs, statuses, steps = run(pipeline(args.ir, args.kv_blocks, args), prompts, args.new_tokens, cancel)
    except Exception as e:  # an OPENVINO_ASSERT surfaces here as a RuntimeError
        print(json.dumps({"exception": f"{type(e).__name__}: {e}"[:2000]}))
        return 3
    differ = []
    for i in range(16):
        if i in cancel or statuses[i] != "FINISHED":
            continue
        if outs[i] != base[i]:
            first = next(k for k in range(min(len(outs[i]), len(base[i]))) if outs[i][k] != base[i][k]) if outs[i][: len(base[i])] != base[i][: len(outs[i])] else min(len(outs[i]), len(base[i]))
            differ.append({"request": i, "prompt_tokens": len(prompts[i]), "first_differing_token": first})
    print(json.dumps({
        "genai": genai.__version__, "kv_blocks": args.kv_blocks, "max_num_batched_tokens": args.batched,
        "prefix_caching": args.prefix_caching, "cache_interval_multiplier": args.multiplier or "adaptive",
        "new_tokens": args.new_tokens, "steps": steps, "seconds": round(time.time() - t, 2), "statuses": statuses,
        "lengths": [len(o) for o in outs], "finished_but_different_from_unpressured": differ,
        "unpressured_equal_to_reference": [base[i][:32] == cases[(i * 5) % len(cases)]["greedy_ids"] for i in range(16)] if args.new_tokens >= 32 else None,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
