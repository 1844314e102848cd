"""Build test/fixtures/qwen3-tiny: a tiny random-weight Qwen3ForCausalLM with reference outputs.

weft's CPU backend is checked against it (q/k RMSNorm, GQA, head_dim != hidden/heads, untied
lm_head, rope_theta 1e6). Run where PyTorch + transformers exist:

    python3 tools/demo-model/make_qwen3_fixture.py --out test/fixtures/qwen3-tiny

Everything is seeded; the reference is computed on the CPU in float32 with eager attention.
"""
import argparse
import json
import os
import sys

import torch
import transformers
from transformers import Qwen3Config, Qwen3ForCausalLM

SEED = 1234
NEW_TOKENS = 32
VOCAB = 384
PROMPT_LENGTHS = [1, 2, 7, 16, 40]


def make_config():
    common = dict(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=32,  # deliberately != hidden_size / num_attention_heads (16)
        max_position_embeddings=512,
        rms_norm_eps=1e-6,
        hidden_act="silu",
        attention_bias=False,
        tie_word_embeddings=False,
        use_sliding_window=False,
        bos_token_id=1,
        eos_token_id=2,
    )
    major = int(transformers.__version__.split(".")[0])
    if major >= 5:
        return Qwen3Config(rope_parameters={"rope_type": "default", "rope_theta": 1e6}, **common)
    return Qwen3Config(rope_theta=1e6, **common)


def randomize(model, gen):
    """Weights large enough that logits are spread out (HF's 0.02 init gives near-ties that would
    make greedy comparisons fragile), and norm weights away from 1 so a skipped norm shows."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=gen))
            elif "embed_tokens" in name:
                p.copy_(torch.randn(p.shape, generator=gen))
            else:
                fan_in = p.shape[-1]
                p.copy_(torch.randn(p.shape, generator=gen) * (1.5 / fan_in**0.5))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="test/fixtures/qwen3-tiny")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)

    config = make_config()
    model = Qwen3ForCausalLM(config).to(torch.float32)
    randomize(model, gen)
    model.eval()
    model.config.use_cache = True
    model.save_pretrained(args.out, safe_serialization=True)
    # Reload what was saved so the reference comes from the file contents exactly.
    model = Qwen3ForCausalLM.from_pretrained(args.out, attn_implementation="eager").to(torch.float32)
    model.eval()

    cases = []
    min_gap = float("inf")
    for n in PROMPT_LENGTHS:
        # ids 3.. avoid bos/eos so nothing special is implied
        prompt = torch.randint(3, VOCAB, (n,), generator=gen).tolist()
        ids = torch.tensor([prompt])
        greedy = []
        first_logits = None
        with torch.no_grad():
            for step in range(NEW_TOKENS):  # full recompute each step: no cache subtleties
                logits = model(ids).logits[0, -1].float()
                if step == 0:
                    first_logits = logits
                top2 = torch.topk(logits, 2).values
                min_gap = min(min_gap, float(top2[0] - top2[1]))
                nxt = int(torch.argmax(logits))
                greedy.append(nxt)
                ids = torch.cat([ids, torch.tensor([[nxt]])], dim=1)
        cases.append({
            "prompt_ids": prompt,
            "greedy_ids": greedy,
            "first_logits": [round(float(x), 6) for x in first_logits],
        })

    script = open(os.path.abspath(__file__)).read()
    ref = {
        "model": "qwen3-tiny (random weights)",
        "seed": SEED,
        "vocab_size": VOCAB,
        "new_tokens": NEW_TOKENS,
        "conventions": {
            "prompt_ids": "fed as-is: no BOS is added (the model has no tokenizer)",
            "greedy_ids": "argmax of the last position's logits at every step, exactly new_tokens steps, never stopping (eos 2 may occur and must not stop generation)",
            "first_logits": "float32 logits over the whole vocabulary after the last prompt token, rounded to 6 decimals",
            "min_top2_gap": "smallest gap between the best and second-best logit over all greedy steps: a backend whose logits are within a fraction of this matches greedy_ids",
        },
        "min_top2_gap": round(min_gap, 6),
        "produced_with": {
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "python": sys.version.split()[0],
            "device": "cpu, float32, attn_implementation=eager",
            "command": "python3 tools/demo-model/make_qwen3_fixture.py --out test/fixtures/qwen3-tiny",
        },
        "script": script,
        "cases": cases,
    }
    with open(os.path.join(args.out, "reference.json"), "w") as f:
        json.dump(ref, f, separators=(",", ":"))
    print("transformers", transformers.__version__, "torch", torch.__version__, "min gap", min_gap)
    for c in cases:
        print(len(c["prompt_ids"]), c["greedy_ids"][:8])


if __name__ == "__main__":
    main()
