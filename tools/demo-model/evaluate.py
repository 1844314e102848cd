"""Evaluates a weft-demo model folder on held-out conversations with transformers greedy decoding.

    python3 tools/demo-model/evaluate.py --model models/weft-demo --heldout tools/demo-model/heldout.jsonl

Every assistant turn after a conversation's last user message is a test: the prompt is the
conversation up to that turn (rendered by chat_format with the generation prompt), the output is
greedy until <|im_end|>. A tool turn passes when the output's tool calls have exactly the expected
names and arguments (values typed by the tool schema, as weft's qwen3coder parser types them), in
order; any other turn passes when the output has no tool call. Reasoning must be non-empty.
"""
import argparse
import json
import re
import time

import chat_format
from tool_impl import TOOLS, fmt_number

SCHEMAS = {t["function"]["name"]: t["function"]["parameters"]["properties"] for t in TOOLS}
CALL_RE = re.compile(r"<tool_call>\s*<function=([^>\n]+)>(.*?)</function>\s*</tool_call>", re.S)
PARAM_RE = re.compile(r"<parameter=([^>\n]+)>\n?(.*?)\n?</parameter>", re.S)


def typed(tool, key, raw):
    kind = SCHEMAS.get(tool, {}).get(key, {}).get("type", "string")
    try:
        if kind == "integer":
            return int(raw)
        if kind == "number":
            return fmt_number(float(raw))
        if kind == "boolean":
            return {"true": True, "false": False}.get(raw.strip().lower(), raw)
        if kind in ("array", "object"):
            return json.loads(raw)
    except ValueError:
        return raw
    return raw


def parse_output(text):
    """(reasoning, content, calls) from generated text that starts with <think>."""
    text = text.replace("<|im_end|>", "")
    reasoning, rest = "", text
    if "</think>" in text:
        reasoning, rest = text.split("</think>", 1)
        reasoning = reasoning.replace("<think>", "").strip()
    calls = []
    for name, body in CALL_RE.findall(rest):
        args = {k: typed(name, k, v) for k, v in PARAM_RE.findall(body)}
        calls.append({"name": name, "arguments": args})
    content = CALL_RE.sub("", rest).strip()
    return reasoning, content, calls


def expected_calls(message):
    return [{"name": c["function"]["name"],
             "arguments": {k: (fmt_number(v) if isinstance(v, float) else v) for k, v in c["function"]["arguments"].items()}}
            for c in message.get("tool_calls") or []]


def test_turns(conversations):
    """(conversation id, prompt messages, expected assistant message) for every trained turn."""
    for conv in conversations:
        msgs = conv["messages"]
        last_user = max(i for i, m in enumerate(msgs) if m["role"] == "user")
        for k in range(last_user + 1, len(msgs)):
            if msgs[k]["role"] == "assistant":
                yield conv["id"], msgs[:k], msgs[k]


def score(turns, outputs):
    stats = {"tool_turns": 0, "tool_correct": 0, "other_turns": 0, "other_correct": 0,
             "answer_exact": 0, "reasoning_nonempty": 0, "turns": 0}
    failures = []
    for (cid, _, want), out in zip(turns, outputs):
        reasoning, content, calls = parse_output(out)
        stats["turns"] += 1
        stats["reasoning_nonempty"] += bool(reasoning)
        exp = expected_calls(want)
        if exp:
            stats["tool_turns"] += 1
            ok = calls == exp
            stats["tool_correct"] += ok
        else:
            stats["other_turns"] += 1
            ok = not calls
            stats["other_correct"] += ok
            stats["answer_exact"] += content == want["content"]
        if not ok or not reasoning:
            failures.append({"id": cid, "expected": exp or want["content"], "output": out})
    stats["tool_accuracy"] = stats["tool_correct"] / max(1, stats["tool_turns"])
    stats["no_tool_accuracy"] = stats["other_correct"] / max(1, stats["other_turns"])
    stats["answer_exact_rate"] = stats["answer_exact"] / max(1, stats["other_turns"])
    stats["reasoning_rate"] = stats["reasoning_nonempty"] / max(1, stats["turns"])
    return stats, failures


def generate_all(model, tokenizer, prompts, eos_id, pad_id, batch_size=64, max_new_tokens=512):
    """Greedy, batched with left padding (transformers derives positions from the mask)."""
    import torch
    device = next(model.parameters()).device
    encoded = [tokenizer.encode(p, add_special_tokens=False).ids for p in prompts]
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    outputs = [None] * len(encoded)
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        width = max(len(encoded[i]) for i in idx)
        ids = torch.full((len(idx), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(idx), width), dtype=torch.long)
        for row, i in enumerate(idx):
            ids[row, width - len(encoded[i]):] = torch.tensor(encoded[i])
            mask[row, width - len(encoded[i]):] = 1
        with torch.no_grad():
            gen = model.generate(input_ids=ids.to(device), attention_mask=mask.to(device), do_sample=False,
                                 max_new_tokens=max_new_tokens, eos_token_id=eos_id, pad_token_id=pad_id)
        for row, i in enumerate(idx):
            new = gen[row, width:].tolist()
            if eos_id in new:
                new = new[:new.index(eos_id) + 1]
            outputs[i] = tokenizer.decode(new, skip_special_tokens=False)
    return outputs


def evaluate(model_dir, heldout_path, device="cuda", batch_size=64, limit=None):
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModelForCausalLM
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    tokenizer = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    model = AutoModelForCausalLM.from_pretrained(model_dir, attn_implementation="eager").to(device, torch.float32).eval()
    eos_id = tokenizer.token_to_id("<|im_end|>")
    pad_id = tokenizer.token_to_id("<|endoftext|>")
    conversations = [json.loads(line) for line in open(heldout_path)][:limit]
    turns = list(test_turns(conversations))
    prompts = [chat_format.render(msgs, TOOLS, add_generation_prompt=True)[0] for _, msgs, _ in turns]
    t0 = time.time()
    outputs = generate_all(model, tokenizer, prompts, eos_id, pad_id, batch_size)
    # batching must not change greedy results: recheck a few turns one at a time
    solo = generate_all(model, tokenizer, prompts[:8], eos_id, pad_id, batch_size=1)
    stats, failures = score(turns, outputs)
    stats["batched_equals_solo"] = sum(a == b for a, b in zip(solo, outputs[:8]))
    stats["conversations"] = len(conversations)
    stats["seconds"] = round(time.time() - t0, 1)
    return stats, failures, [{"id": t[0], "output": o} for t, o in zip(turns, outputs)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--heldout", required=True)
    ap.add_argument("--out", default=None)
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args()
    stats, failures, outputs = evaluate(args.model, args.heldout, limit=args.limit)
    print(json.dumps(stats, indent=1))
    for f in failures[:20]:
        print(json.dumps(f)[:600])
    if args.out:
        json.dump({"stats": stats, "failures": failures, "outputs": outputs}, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
