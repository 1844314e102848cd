"""Trains the weft-demo model: a Qwen3ForCausalLM of about 2.3M parameters on datagen's synthetic
tool-calling conversations, loss on the assistant's own tokens only.

    python3 tools/demo-model/train.py --out models/weft-demo --steps 3000

Needs PyTorch, transformers and tokenizers; one H200 takes a few minutes. The tokenizer files must
already be in --out (make_tokenizer.py writes them). Writes config.json, model.safetensors
(float32), generation_config.json and train_log.json into --out.
"""
import argparse
import json
import math
import os
import random
import time

import torch
import transformers
from tokenizers import Tokenizer
from transformers import Qwen3Config, Qwen3ForCausalLM

import chat_format
import datagen
from tool_impl import TOOLS

# --shape demo: models/weft-demo (~2.3M parameters). --shape target: its larger sibling (~10M), trained
# on the same data with the same tokenizer, the target of the draft-model pair (weft-demo drafts for it).
MODEL_SHAPES = {
    "demo": dict(hidden_size=192, intermediate_size=512, num_hidden_layers=5, num_attention_heads=4,
                 num_key_value_heads=2, head_dim=48),
    "target": dict(hidden_size=384, intermediate_size=1024, num_hidden_layers=6, num_attention_heads=6,
                   num_key_value_heads=2, head_dim=64),
}
MODEL_SHAPE = MODEL_SHAPES["demo"]


def build_config(vocab_size, eos_id, pad_id):
    common = dict(vocab_size=vocab_size, max_position_embeddings=4096, rms_norm_eps=1e-6, hidden_act="silu",
                  attention_bias=False, tie_word_embeddings=True, use_sliding_window=False,
                  bos_token_id=None, eos_token_id=eos_id, pad_token_id=pad_id, **MODEL_SHAPE)
    if int(transformers.__version__.split(".")[0]) >= 5:
        return Qwen3Config(rope_parameters={"rope_type": "default", "rope_theta": 1e6}, **common)
    return Qwen3Config(rope_theta=1e6, **common)


def pieces(text, spans):
    """Cuts a rendered conversation at its trained spans: [(text, trained)]. Every cut sits next to
    an added token (before "<think>", after "<|im_end|>"), so encoding the pieces one by one gives
    the same ids as encoding the whole text (check_pieces verifies it)."""
    out, pos = [], 0
    for s, e in spans:
        if s > pos:
            out.append((text[pos:s], 0))
        out.append((text[s:e], 1))
        pos = e
    if pos < len(text):
        out.append((text[pos:], 0))
    return out


def encode_conversations(tokenizer, conversations):
    """The system prompt's ids (identical for all) and, per conversation, the ids after it with a
    0/1 mask of the tokens the loss is taken on (the assistant's own output)."""
    system_text = chat_format.render([], TOOLS)[0]
    system_ids = tokenizer.encode(system_text, add_special_tokens=False).ids
    all_pieces = []
    for m in conversations:
        text, spans = chat_format.render(m, TOOLS)
        assert text.startswith(system_text)
        cut = len(system_text)
        all_pieces.append(pieces(text[cut:], [(s - cut, e - cut) for s, e in spans]))
    flat = [p for ps in all_pieces for p, _ in ps]
    encoded = iter(tokenizer.encode_batch(flat, add_special_tokens=False))
    data = []
    for ps in all_pieces:
        ids, mask = [], []
        for _, trained in ps:
            piece_ids = next(encoded).ids
            ids += piece_ids
            mask += [trained] * len(piece_ids)
        data.append((ids, mask))
    return system_ids, data


def check_pieces(tokenizer, conversations, system_ids, data):
    """Piecewise encoding must equal whole-text encoding; returns the number checked."""
    for m, (ids, _) in zip(conversations, data):
        whole = tokenizer.encode(chat_format.render(m, TOOLS)[0], add_special_tokens=False).ids
        assert whole == system_ids + ids, "piecewise encoding differs"
    return len(conversations)


def batches(system_ids, data, batch_size, pad_id, rng):
    """Random batches, right-padded: with causal attention the pads never affect real tokens."""
    n_sys = len(system_ids)
    while True:
        idx = [rng.randrange(len(data)) for _ in range(batch_size)]
        width = n_sys + max(len(data[i][0]) for i in idx)
        ids = torch.full((batch_size, width), pad_id, dtype=torch.long)
        labels = torch.full((batch_size, width), -100, dtype=torch.long)
        ids[:, :n_sys] = torch.tensor(system_ids)
        for row, i in enumerate(idx):
            tok, mask = data[i]
            t = torch.tensor(tok)
            ids[row, n_sys:n_sys + len(tok)] = t
            labels[row, n_sys:n_sys + len(tok)] = torch.where(torch.tensor(mask, dtype=torch.bool), t, -100)
        yield ids, labels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--conversations", type=int, default=80000)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--max-minutes", type=float, default=6.0, help="stop early (logged) past this")
    ap.add_argument("--shape", choices=sorted(MODEL_SHAPES), default="demo")
    ap.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32", help="of the saved weights")
    args = ap.parse_args()
    global MODEL_SHAPE
    MODEL_SHAPE = MODEL_SHAPES[args.shape]
    t_start = time.time()
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = "cuda"

    tokenizer = Tokenizer.from_file(os.path.join(args.out, "tokenizer.json"))
    eos_id = tokenizer.token_to_id("<|im_end|>")
    pad_id = tokenizer.token_to_id("<|endoftext|>")
    vocab_size = (tokenizer.get_vocab_size(with_added_tokens=True) + 63) // 64 * 64

    conversations = datagen.generate(args.seed, args.conversations)
    system_ids, data = encode_conversations(tokenizer, conversations)
    checked = check_pieces(tokenizer, conversations[:500], system_ids, data[:500])
    n_tokens = sum(len(d[0]) + len(system_ids) for d in data)
    n_trained = sum(sum(d[1]) for d in data)
    print(f"data: {len(data)} conversations, {n_tokens} tokens, {n_trained} trained tokens, "
          f"{time.time() - t_start:.0f}s (piecewise encoding checked on {checked})", flush=True)

    config = build_config(vocab_size, eos_id, pad_id)
    model = Qwen3ForCausalLM(config)
    model.to(device)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {n_params} parameters", flush=True)

    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), fused=True)
    warmup = max(1, args.steps // 30)

    def lr_at(step):
        if step < warmup:
            return args.lr * (step + 1) / warmup
        progress = (step - warmup) / max(1, args.steps - warmup)
        return args.lr * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * progress)))

    rng = random.Random(args.seed)
    stream = batches(system_ids, data, args.batch, pad_id, rng)
    log = []
    stopped_at = None
    model.train()
    t_train = time.time()
    for step in range(args.steps):
        ids, labels = next(stream)
        ids, labels = ids.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(input_ids=ids).logits
        loss = torch.nn.functional.cross_entropy(logits[:, :-1].float().reshape(-1, vocab_size),
                                                 labels[:, 1:].reshape(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step == 0 or (step + 1) % 100 == 0:
            entry = {"step": step + 1, "loss": round(loss.item(), 4), "lr": round(lr_at(step), 6),
                     "seconds": round(time.time() - t_train, 1)}
            log.append(entry)
            print(json.dumps(entry), flush=True)
            if time.time() - t_train > args.max_minutes * 60:
                print(f"stopping early at step {step + 1}: time limit", flush=True)
                stopped_at = step + 1
                break

    model.eval()
    model.to(getattr(torch, args.dtype)).save_pretrained(args.out, safe_serialization=True)
    gen = {"eos_token_id": [eos_id, pad_id], "pad_token_id": pad_id, "do_sample": False,
           "max_new_tokens": 512, "transformers_version": transformers.__version__}
    json.dump(gen, open(os.path.join(args.out, "generation_config.json"), "w"), indent=2)
    summary = {"seed": args.seed, "conversations": len(data), "tokens": n_tokens, "trained_tokens": n_trained,
               "steps": args.steps, "stopped_early_at": stopped_at, "batch": args.batch, "lr": args.lr, "parameters": n_params,
               "shape": MODEL_SHAPE, "shape_name": args.shape, "dtype": args.dtype, "vocab_size": vocab_size,
               "train_seconds": round(time.time() - t_train, 1), "total_seconds": round(time.time() - t_start, 1),
               "torch": torch.__version__, "transformers": transformers.__version__,
               "device": torch.cuda.get_device_name(), "curve": log}
    json.dump(summary, open(os.path.join(args.out, "train_log.json"), "w"), indent=1)
    print(f"saved to {args.out} after {summary['total_seconds']}s", flush=True)


if __name__ == "__main__":
    main()
