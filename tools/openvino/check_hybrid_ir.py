#!/usr/bin/env python3
"""Drive a hybrid (Qwen3.5) IR through OpenVINO's own paged transformation by hand and compare
greedy ids with transformers' reference.json. Needs only the openvino wheel and numpy.

    python3 tools/openvino/check_hybrid_ir.py test/fixtures/qwen35-tiny-openvino test/fixtures/qwen35-tiny/reference.json

What it checks (docs/openvino.md, "Hybrid models"):
  1. each prompt alone, the prompt in one step and in steps of 1, 3 and 64 tokens;
  2. eight sequences in one batch, random step sizes, each with its own KV blocks and state block;
  3. la.cache_interval > 0 (prefix-caching layout): every checkpoint block equals a fresh run's state;
  4. that the kernel reads the state block even at past length 0 (so it must be zeroed first).
"""
import json
import random
import sys

import numpy as np
import openvino as ov
from openvino._offline_transformations import paged_attention_transformation

ir_dir, ref_path = sys.argv[1], sys.argv[2]
core = ov.Core()
model = core.read_model(f"{ir_dir}/openvino_model.xml")
paged_attention_transformation(model)
compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32", "INFERENCE_NUM_THREADS": "1"})
req = compiled.create_infer_request()
KV_BLOCKS, LA_BLOCKS = 160, 96
tables = {}
for port in compiled.inputs:
    name = port.get_any_name()
    kv = name.startswith(("key_cache.", "value_cache."))
    if kv or name.startswith(("conv_state_table.", "gated_delta_state_table.")):
        dims = [d.get_length() for d in list(port.get_partial_shape())[1:]]
        tables[name] = ov.Tensor(np.zeros([KV_BLOCKS if kv else LA_BLOCKS] + dims, dtype=np.float32))
        req.set_tensor(name, tables[name])
LA = [n for n in tables if not n.startswith(("key_cache.", "value_cache."))]
BS = compiled.input("value_cache.0").get_partial_shape()[2].get_length()
cases = json.load(open(ref_path))["cases"]


def la_zero(block):
    for n in LA:
        tables[n].data[block] = 0


def la_state(block):
    return {n: tables[n].data[block].copy() for n in LA}


def step(seqs):
    """seqs: dicts with tokens, past, kv (block table), la ([read, write...]), interval."""
    ids, pos, past, sb, bi, bib, lab, labb, lai = [], [], [], [0], [], [0], [], [0], []
    for s in seqs:
        ids += s["tokens"]
        pos += range(s["past"], s["past"] + len(s["tokens"]))
        past.append(s["past"])
        sb.append(len(ids))
        bi += s["kv"]
        bib.append(len(bi))
        lab += s["la"]
        labb.append(len(lab))
        lai.append(s["interval"])
    i32 = lambda v: np.array(v, np.int32)
    feed = {
        "input_ids": np.array(ids, np.int64), "position_ids": np.array(pos, np.int64), "past_lens": i32(past),
        "subsequence_begins": i32(sb), "block_indices": i32(bi), "block_indices_begins": i32(bib),
        "max_context_len": np.array(max(p + len(s["tokens"]) for p, s in zip(past, seqs)), np.int32),
        "la.block_indices": i32(lab), "la.block_indices_begins": i32(labb), "la.past_lens": i32(past), "la.cache_interval": i32(lai),
    }
    for k, v in feed.items():
        req.set_tensor(k, ov.Tensor(v))
    req.infer()
    return req.get_tensor("logits").data[:, 0].copy()


def alone(case, chunk, slot=1):
    p, out, past = case["prompt_ids"], [], 0
    la_zero(slot)
    kv = list(range(1, 1 + (len(p) + 32 + BS - 1) // BS))
    while len(out) < 32:
        t = p[past:past + (len(p) - past if chunk is None else min(chunk, len(p) - past))] if past < len(p) else [out[-1]]
        logits = step([dict(tokens=t, past=past, kv=kv, la=[slot, slot], interval=0)])
        past += len(t)
        if past >= len(p):
            out.append(int(np.argmax(logits[-1])))
    return out


ok = True
for chunk in (None, 1, 3, 64):
    res = [alone(c, chunk) == c["greedy_ids"] for c in cases]
    ok &= all(res)
    print(f"alone, {'whole prompt' if chunk is None else f'{chunk}-token steps'}: {res}")

random.seed(1)
seqs = []
for i in range(8):
    c = cases[i % len(cases)]
    seqs.append(dict(p=c["prompt_ids"], want=c["greedy_ids"], past=0, out=[], slot=10 + i, kv=list(range(1 + i * 16, 1 + (i + 1) * 16))))
    la_zero(10 + i)
while any(len(s["out"]) < 32 for s in seqs):
    live = [s for s in seqs if len(s["out"]) < 32 and random.random() < 0.8]
    if not live:
        continue
    batch = []
    for s in live:
        if s["past"] < len(s["p"]):
            n = min(random.choice([1, 5, 17, 64]), len(s["p"]) - s["past"])
            batch.append((s, s["p"][s["past"]:s["past"] + n]))
        else:
            batch.append((s, [s["out"][-1]]))
    logits = step([dict(tokens=t, past=s["past"], kv=s["kv"], la=[s["slot"], s["slot"]], interval=0) for s, t in batch])
    end = 0
    for s, t in batch:
        end += len(t)
        s["past"] += len(t)
        if s["past"] >= len(s["p"]):
            s["out"].append(int(np.argmax(logits[end - 1])))
res = [s["out"] == s["want"] for s in seqs]
ok &= all(res)
print("8 at once, random step sizes:", res)

C = 32
case = cases[-1]
for chunk in (32, 64, 50, 1):
    base = 30
    for j in range(21):
        la_zero(base + j)
    p, out, past = case["prompt_ids"], [], 0
    kv = list(range(1, 17))
    while len(out) < 32:
        t = p[past:past + min(chunk, len(p) - past)] if past < len(p) else [out[-1]]
        read = base if past == 0 else base + 1 + (past - 1) // C
        first, count = past // C, (past % C + len(t) + C - 1) // C
        logits = step([dict(tokens=t, past=past, kv=kv, la=[read] + [base + 1 + j for j in range(first, first + count)], interval=C)])
        past += len(t)
        if past >= len(p):
            out.append(int(np.argmax(logits[-1])))
    differ = []
    for j in range(len(p) // C):
        la_zero(80)
        step([dict(tokens=p[:(j + 1) * C], past=0, kv=list(range(17, 33)), la=[80, 80], interval=0)])
        fresh, kept = la_state(80), la_state(base + 1 + j)
        if any(np.abs(fresh[n] - kept[n]).max() > 1e-4 for n in LA):
            differ.append(j)
    ok &= out == case["greedy_ids"] and not differ
    print(f"cache_interval {C}, {chunk}-token steps: greedy equal {out == case['greedy_ids']}, checkpoints differing from a fresh run: {differ}")

c = cases[3]
la_zero(5)
a = step([dict(tokens=c["prompt_ids"], past=0, kv=[1, 2, 3], la=[5, 5], interval=0)])[-1]
for n in LA:
    tables[n].data[6] = 7.0
b = step([dict(tokens=c["prompt_ids"], past=0, kv=[1, 2, 3], la=[6, 6], interval=0)])[-1]
print(f"a non-zero state block at past length 0 changes the logits by {np.abs(a - b).max():.3g} (the kernel reads it: zero it first)")
print("first-position logits vs reference, max abs diff:", float(np.abs(a - np.array(c["first_logits"])).max()))
print("ALL EQUAL" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
