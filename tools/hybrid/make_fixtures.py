"""Build tiny random-weight hybrid (Gated DeltaNet + full attention) fixtures with reference outputs.

Makes, under --out (default test/fixtures):

  qwen35-tiny      Qwen3_5ForCausalLM (model_type qwen3_5_text, weights model.layers.N.*)
  qwen35-tiny-vl   Qwen3_5ForConditionalGeneration (model_type qwen3_5, text_config nested, weights
                   model.language_model.layers.N.*, a tiny vision tower model.visual.* and stand-in
                   mtp.* tensors that a text-only loader must skip)
  qwen3next-tiny   Qwen3NextForCausalLM (fused in_proj_qkvz / in_proj_ba, sparse MoE + shared expert)

Run where PyTorch + transformers exist (tools/hybrid/requirements.txt; a recipe, never CI):

    nice python3 tools/hybrid/make_fixtures.py --out test/fixtures

Everything is seeded; references are computed on the CPU in float32 with eager attention and the
transformers cache (use_cache=True), i.e. a chunked gated-delta-rule prefill (chunks of 64) followed by
recurrent single-token decode steps. For the first prompt longer than 256 tokens the recipe also runs
the prompt token by token through the cache (the recurrent form) and records those logits.
"""
import argparse
import json
import os
import sys

import safetensors
import torch
import transformers
from safetensors.torch import load_file, save_file
from transformers import (
    DynamicCache,
    GenerationConfig,
    Qwen3_5Config,
    Qwen3_5ForCausalLM,
    Qwen3_5ForConditionalGeneration,
    Qwen3_5TextConfig,
    Qwen3NextConfig,
    Qwen3NextForCausalLM,
)

NEW_TOKENS = 32
PROMPT_LENGTHS = [1, 2, 7, 64, 129, 300]
VOCAB = 384
COMMAND = "nice python3 tools/hybrid/make_fixtures.py --out test/fixtures"

# Half-split rotary over the first head_dim * 0.25 dims of each head; for text the three M-RoPE
# sections all carry the same position, so mrope_section only has to add up to rotary_dim / 2.
ROPE_QWEN35 = {
    "rope_type": "default",
    "rope_theta": 10_000_000.0,
    "partial_rotary_factor": 0.25,
    "mrope_section": [1, 1, 0],
    "mrope_interleaved": True,
}
ROPE_QWEN3NEXT = {"rope_type": "default", "rope_theta": 10_000_000.0, "partial_rotary_factor": 0.25}


def qwen35_text_kwargs(tie):
    return dict(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=16,  # kept small: the files stay well under 1 MB
        num_hidden_layers=8,
        layer_types=["linear_attention"] * 3 + ["full_attention"] + ["linear_attention"] * 3 + ["full_attention"],
        num_attention_heads=4,
        num_key_value_heads=2,  # GQA 2:1 on the full-attention layers
        head_dim=16,  # != 64 / 4; rotary dim = 16 * 0.25 = 4
        linear_num_key_heads=2,
        linear_num_value_heads=4,  # each k head serves 2 consecutive value heads
        linear_key_head_dim=16,
        linear_value_head_dim=8,  # != key head dim so a transposed [Dk, Dv] state shows
        linear_conv_kernel_dim=4,
        max_position_embeddings=1024,
        rms_norm_eps=1e-6,
        hidden_act="silu",
        attention_bias=False,
        tie_word_embeddings=tie,
        rope_parameters=dict(ROPE_QWEN35),
        bos_token_id=1,
        eos_token_id=2,
    )


def qwen3next_config():
    return Qwen3NextConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,  # unused: every layer is MoE (decoder_sparse_step 1, no mlp_only_layers)
        num_hidden_layers=8,
        layer_types=["linear_attention"] * 3 + ["full_attention"] + ["linear_attention"] * 3 + ["full_attention"],
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        linear_num_key_heads=2,
        linear_num_value_heads=4,
        linear_key_head_dim=16,
        linear_value_head_dim=8,
        linear_conv_kernel_dim=4,
        num_experts=4,
        num_experts_per_tok=2,
        moe_intermediate_size=16,
        shared_expert_intermediate_size=32,
        norm_topk_prob=True,
        decoder_sparse_step=1,
        mlp_only_layers=[],
        max_position_embeddings=1024,
        rms_norm_eps=1e-6,
        hidden_act="silu",
        attention_bias=False,
        tie_word_embeddings=False,
        rope_parameters=dict(ROPE_QWEN3NEXT),
        bos_token_id=1,
        eos_token_id=2,
    )


def qwen35_vl_config():
    text = qwen35_text_kwargs(tie=True)
    vision = dict(
        depth=1,
        hidden_size=16,
        intermediate_size=32,
        num_heads=2,
        in_channels=3,
        patch_size=4,
        spatial_merge_size=2,
        temporal_patch_size=2,
        out_hidden_size=64,  # = text hidden size
        num_position_embeddings=16,  # a 4x4 learned grid
        hidden_act="gelu_pytorch_tanh",
    )
    # Token ids of the vision specials must lie inside the tiny vocabulary.
    return Qwen3_5Config(
        text_config=text,
        vision_config=vision,
        image_token_id=380,
        video_token_id=381,
        vision_start_token_id=382,
        vision_end_token_id=383,
        tie_word_embeddings=True,
    )


def randomize(model, gen):
    """Weights large enough that logits spread (HF's 0.02 init gives near-ties), norms away from their
    neutral value so a skipped or mis-centred norm shows, and decays that keep a useful memory."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("linear_attn.norm.weight"):
                # gated RMSNorm multiplies by w itself (initialised to ones)
                p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=gen))
            elif name.endswith("norm.weight") and ".visual." not in name:
                # the other Qwen3.5 / Qwen3-Next RMSNorms multiply by (1 + w): w is zero-centred
                p.copy_(0.3 * torch.randn(p.shape, generator=gen))
            elif ".visual." in name and ("norm" in name) and name.endswith(".weight"):
                # vision LayerNorms (plain w; never run by the references, only present in the file)
                p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=gen))
            elif name.endswith("A_log"):
                # A in [0.02, 1]: with softplus(a + dt_bias) in ~[0.3, 1.5] the per-token decay
                # exp(g) spans ~0.2 .. 0.99, so state carries over many tokens
                a = 0.02 + 0.98 * torch.rand(p.shape, generator=gen)
                p.copy_(torch.log(a))
            elif name.endswith("dt_bias"):
                p.copy_(0.5 * torch.randn(p.shape, generator=gen))
            elif "embed_tokens" in name:
                p.copy_(torch.randn(p.shape, generator=gen))
            elif name.endswith("in_proj_a.weight"):
                p.copy_(torch.randn(p.shape, generator=gen) * (0.5 / p.shape[-1] ** 0.5))
            elif p.ndim == 1:
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
            else:
                fan_in = p.shape[-1]
                if p.ndim == 5:  # vision Conv3d patch embed [out, in, t, h, w]
                    fan_in = p.shape[1] * p.shape[2] * p.shape[3] * p.shape[4]
                p.copy_(torch.randn(p.shape, generator=gen) * (1.5 / fan_in**0.5))


def sig6(x):
    return float(f"{float(x):.6g}")


def greedy_with_cache(model, prompt):
    """Prefill the whole prompt in one forward (chunked rule), then NEW_TOKENS recurrent decode steps."""
    ids = torch.tensor([prompt])
    cache = DynamicCache(config=model.config)
    out = model(input_ids=ids, past_key_values=cache, use_cache=True)
    logits = out.logits[0, -1].float()
    first = logits.clone()
    greedy, gaps = [], []
    for step in range(NEW_TOKENS):
        top2 = torch.topk(logits, 2).values
        gaps.append(float(top2[0] - top2[1]))
        nxt = int(torch.argmax(logits))
        greedy.append(nxt)
        if step == NEW_TOKENS - 1:
            break
        out = model(input_ids=torch.tensor([[nxt]]), past_key_values=out.past_key_values, use_cache=True)
        logits = out.logits[0, -1].float()
    return first, greedy, min(gaps)


def greedy_generate(model, prompt):
    ids = torch.tensor([prompt])
    # No eos: greedy runs exactly NEW_TOKENS steps (min_new_tokens would mask eos instead, changing picks)
    cfg = GenerationConfig(max_new_tokens=NEW_TOKENS, do_sample=False, use_cache=True, eos_token_id=None,
                           pad_token_id=0, bos_token_id=None)
    saved_eos = model.generation_config.eos_token_id
    model.generation_config.eos_token_id = None  # else generate() merges the model's eos back in
    try:
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), generation_config=cfg)
    finally:
        model.generation_config.eos_token_id = saved_eos
    return out[0, len(prompt):].tolist()


def greedy_no_cache(model, prompt):
    ids = torch.tensor([prompt])
    greedy = []
    for _ in range(NEW_TOKENS):
        logits = model(input_ids=ids, use_cache=False).logits[0, -1]
        nxt = int(torch.argmax(logits))
        greedy.append(nxt)
        ids = torch.cat([ids, torch.tensor([[nxt]])], dim=1)
    return greedy


def token_by_token(model, prompt):
    """Feed the prompt one token at a time through the cache: the first token takes the chunked path
    (no state yet), every later one the recurrent rule and the single-step conv update."""
    cache = DynamicCache(config=model.config)
    rows = []
    for t in prompt:
        out = model(input_ids=torch.tensor([[t]]), past_key_values=cache, use_cache=True)
        cache = out.past_key_values
        rows.append(out.logits[0, -1].float())
    return torch.stack(rows)


def add_stand_in_mtp(path, hidden, gen):
    """Published Qwen3.5 checkpoints carry multi-token-prediction weights (mtp.*) that transformers
    ignores on load; add a few stand-ins so a loader is tested on skipping them."""
    tensors = load_file(path)
    tensors["mtp.fc.weight"] = torch.randn(hidden, 2 * hidden, generator=gen)
    tensors["mtp.pre_fc_norm_embedding.weight"] = 0.3 * torch.randn(hidden, generator=gen)
    tensors["mtp.pre_fc_norm_hidden.weight"] = 0.3 * torch.randn(hidden, generator=gen)
    tensors["mtp.norm.weight"] = 0.3 * torch.randn(hidden, generator=gen)
    save_file(tensors, path, metadata={"format": "pt"})


def build(name, out_dir, seed, make_model, load_cls, text_cfg_of, notes, extra_file_step=None):
    path = os.path.join(out_dir, name)
    os.makedirs(path, exist_ok=True)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = make_model().to(torch.float32)
    randomize(model, gen)
    model.eval()
    model.save_pretrained(path, safe_serialization=True)
    if extra_file_step is not None:
        extra_file_step(os.path.join(path, "model.safetensors"), gen)
    # Reload what was saved so the reference comes from the file contents exactly.
    model = load_cls.from_pretrained(path, attn_implementation="eager", dtype=torch.float32)
    model.eval()
    tcfg = text_cfg_of(model.config)

    cases, checks = [], {}
    long_done = False
    recurrent = None
    min_gap = float("inf")
    with torch.no_grad():
        for n in PROMPT_LENGTHS:
            prompt = torch.randint(3, VOCAB - 4, (n,), generator=gen).tolist()  # no bos/eos/vision ids
            first, greedy, gap = greedy_with_cache(model, prompt)
            min_gap = min(min_gap, gap)
            gen_ids = greedy_generate(model, prompt)
            assert gen_ids == greedy, (name, n, "generate() disagrees with the manual cache loop", gen_ids, greedy)
            if n <= 129:
                nc = greedy_no_cache(model, prompt)
                checks[f"no_cache_greedy_equal_len{n}"] = nc == greedy
            case = {
                "prompt_ids": prompt,
                "greedy_ids": greedy,
                "first_logits": [sig6(x) for x in first],
            }
            if n > 256 and not long_done:
                long_done = True
                full = model(input_ids=torch.tensor([prompt]), use_cache=True).logits[0].float()
                rec = token_by_token(model, prompt)
                diff_last = float((rec[-1] - full[-1]).abs().max())
                diff_all = float((rec - full).abs().max())
                diff_first_vs_ref = float((rec[-1] - first).abs().max())
                case["recurrent_last_logits"] = [sig6(x) for x in rec[-1]]
                recurrent = {
                    "prompt_length": n,
                    "max_abs_diff_last_position": diff_last,
                    "max_abs_diff_all_positions": diff_all,
                    "max_abs_diff_vs_first_logits": diff_first_vs_ref,
                    "logit_std_last_position": float(full[-1].std()),
                }
                print(f"{name}: chunked vs recurrent, {n} tokens: last {diff_last:.3g}, all positions {diff_all:.3g}")
            cases.append(case)
            print(name, n, greedy[:8], f"gap {gap:.4f}")

    extra_checks = {}
    if isinstance(model, Qwen3_5ForConditionalGeneration):
        # The text path of the VL model must equal a Qwen3_5ForCausalLM with the same text weights.
        lm = Qwen3_5ForCausalLM(model.config.text_config).to(torch.float32).eval()
        sd = {k.replace("model.language_model.", "model."): v for k, v in model.state_dict().items()
              if k.startswith("model.language_model.") or k == "lm_head.weight"}
        missing, unexpected = lm.load_state_dict(sd, strict=False)
        assert not unexpected, unexpected
        assert all(k == "lm_head.weight" for k in missing), missing
        lm.tie_weights()
        lm.config._attn_implementation = "eager"
        with torch.no_grad():
            p = cases[2]["prompt_ids"]
            d = float((lm(input_ids=torch.tensor([p])).logits[0, -1] - model(input_ids=torch.tensor([p])).logits[0, -1]).abs().max())
        extra_checks["vl_vs_causal_lm_max_abs_diff_len7"] = d
        print(name, "VL text path vs Qwen3_5ForCausalLM:", d)

    script = open(os.path.abspath(__file__)).read()
    ref = {
        "model": f"{name} (random weights)",
        "architecture": model.config.architectures[0],
        "seed": seed,
        "vocab_size": tcfg.vocab_size,
        "new_tokens": NEW_TOKENS,
        "conventions": {
            "prompt_ids": "fed as-is: no BOS is added (the model has no tokenizer)",
            "greedy_ids": "argmax of the last position's logits at every step, exactly new_tokens steps, never stopping (eos 2 may occur and must not stop generation); transformers cache: one prefill forward of the whole prompt (chunked gated delta rule, chunks of 64), then one token per step (recurrent rule); checked equal to model.generate(do_sample=False)",
            "first_logits": "float32 logits over the whole vocabulary after the last prompt token (prefill of the whole prompt), rounded to 6 significant digits",
            "recurrent_last_logits": "only on the first prompt longer than 256 tokens: the same last-position logits when the prompt is fed one token at a time through the cache (recurrent form), 6 significant digits",
            "min_top2_gap": "smallest gap between the best and second-best logit over all greedy steps: a backend whose logits are within a fraction of this matches greedy_ids",
        },
        "min_top2_gap": round(min_gap, 6),
        "chunked_vs_recurrent": recurrent,
        "checks": {**checks, **extra_checks},
        "produced_with": {
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "safetensors": safetensors.__version__,
            "python": sys.version.split()[0],
            "device": "cpu, float32, attn_implementation=eager, use_cache=True",
            "command": COMMAND,
        },
        "notes": notes,
        "script": script,
        "cases": cases,
    }
    with open(os.path.join(path, "reference.json"), "w") as f:
        json.dump(ref, f, separators=(",", ":"))
    print(name, "min gap", min_gap, "checks", ref["checks"])
    return ref


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="test/fixtures")
    ap.add_argument("--only", default=None, help="build one fixture by name")
    args = ap.parse_args()
    torch.set_num_threads(1)
    jobs = {
        "qwen35-tiny": lambda: build(
            "qwen35-tiny", args.out, 3501,
            lambda: Qwen3_5ForCausalLM(Qwen3_5TextConfig(**qwen35_text_kwargs(tie=False))),
            Qwen3_5ForCausalLM, lambda c: c,
            "text-only Qwen3_5ForCausalLM, untied lm_head"),
        "qwen35-tiny-vl": lambda: build(
            "qwen35-tiny-vl", args.out, 3502,
            lambda: Qwen3_5ForConditionalGeneration(qwen35_vl_config()),
            Qwen3_5ForConditionalGeneration, lambda c: c.text_config,
            "published layout: Qwen3_5ForConditionalGeneration, text_config nested, tied lm_head (no lm_head.weight in the file), vision tower model.visual.* and stand-in mtp.* tensors in the file; prompts are text only",
            extra_file_step=lambda p, g: add_stand_in_mtp(p, 64, g)),
        "qwen3next-tiny": lambda: build(
            "qwen3next-tiny", args.out, 3503,
            lambda: Qwen3NextForCausalLM(qwen3next_config()),
            Qwen3NextForCausalLM, lambda c: c,
            "Qwen3NextForCausalLM: fused in_proj_qkvz / in_proj_ba, every layer a sparse MoE (4 experts, top-2, normalised) plus a sigmoid-gated shared expert, untied lm_head"),
    }
    for name, job in jobs.items():
        if args.only is None or args.only == name:
            job()
    print("transformers", transformers.__version__, "torch", torch.__version__)


if __name__ == "__main__":
    main()
