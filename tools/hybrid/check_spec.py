"""An independent NumPy forward pass written from tools/hybrid/NOTES.md (not from transformers' code),
checked against each fixture's reference.json. It runs the recurrent form one token at a time, the way
a decode step does, so it also shows the spec's recurrent rule reproduces transformers' chunked prefill.

    nice python3 tools/hybrid/check_spec.py test/fixtures/qwen35-tiny test/fixtures/qwen35-tiny-vl test/fixtures/qwen3next-tiny

Needs numpy and safetensors only (no torch). Prints, per prompt, the max abs difference of the last
position's logits from first_logits and whether the 32 greedy ids match.
"""
import json
import math
import os
import sys

import numpy as np
from safetensors.numpy import load_file


def rms_1pw(x, w, eps):  # (1 + w) RMSNorm
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * (1.0 + w)


def silu(x):
    return x / (1.0 + np.exp(-x))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softplus(x):
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0.0)


class Model:
    def __init__(self, folder):
        cfg = json.load(open(os.path.join(folder, "config.json")))
        self.kind = cfg["model_type"]
        self.t = cfg.get("text_config", cfg)  # text settings
        self.prefix = "model.language_model." if "text_config" in cfg else "model."
        self.w = {k: v.astype(np.float64) for k, v in load_file(os.path.join(folder, "model.safetensors")).items()}
        t = self.t
        self.tied = bool(cfg.get("tie_word_embeddings", t.get("tie_word_embeddings", False)))
        self.eps = t["rms_norm_eps"]
        self.layer_types = t["layer_types"]
        rp = t["rope_parameters"]
        self.hd = t["head_dim"]
        self.rot = int(self.hd * rp.get("partial_rotary_factor", t.get("partial_rotary_factor", 1.0)))
        self.inv_freq = rp["rope_theta"] ** (-np.arange(0, self.rot, 2, dtype=np.float64) / self.rot)
        self.Hk, self.Hv = t["linear_num_key_heads"], t["linear_num_value_heads"]
        self.Dk, self.Dv = t["linear_key_head_dim"], t["linear_value_head_dim"]
        self.K = t["linear_conv_kernel_dim"]
        self.reset()

    def p(self, name):
        return self.w[self.prefix + name]

    def reset(self):
        n = len(self.layer_types)
        conv_dim = 2 * self.Hk * self.Dk + self.Hv * self.Dv
        self.conv = [np.zeros((self.K - 1, conv_dim)) for _ in range(n)]  # last K-1 pre-conv inputs
        self.S = [np.zeros((self.Hv, self.Dk, self.Dv)) for _ in range(n)]
        self.kc = [[] for _ in range(n)]
        self.vc = [[] for _ in range(n)]
        self.pos = 0

    def linear_attn(self, i, x):
        L = f"layers.{i}.linear_attn."
        Hk, Hv, Dk, Dv = self.Hk, self.Hv, self.Dk, self.Dv
        r = Hv // Hk
        if self.kind == "qwen3_next":
            qkvz = (self.p(L + "in_proj_qkvz.weight") @ x).reshape(Hk, 2 * Dk + 2 * r * Dv)
            ba = (self.p(L + "in_proj_ba.weight") @ x).reshape(Hk, 2 * r)
            q = qkvz[:, :Dk].reshape(-1)
            k = qkvz[:, Dk:2 * Dk].reshape(-1)
            v = qkvz[:, 2 * Dk:2 * Dk + r * Dv].reshape(-1)  # value heads i*r .. i*r+r-1 of k-group i
            z = qkvz[:, 2 * Dk + r * Dv:].reshape(Hv, Dv)
            b = ba[:, :r].reshape(-1)
            a = ba[:, r:].reshape(-1)
            u = np.concatenate([q, k, v])
        else:
            u = self.p(L + "in_proj_qkv.weight") @ x
            z = (self.p(L + "in_proj_z.weight") @ x).reshape(Hv, Dv)
            b = self.p(L + "in_proj_b.weight") @ x
            a = self.p(L + "in_proj_a.weight") @ x
        cw = self.p(L + "conv1d.weight")[:, 0, :]  # [C, K]; tap K-1 is the current token
        window = np.concatenate([self.conv[i], u[None, :]], axis=0)  # [K, C], oldest first
        y = silu(np.sum(window.T * cw, axis=1))
        self.conv[i] = window[1:]
        q = y[:Hk * Dk].reshape(Hk, Dk)
        k = y[Hk * Dk:2 * Hk * Dk].reshape(Hk, Dk)
        v = y[2 * Hk * Dk:].reshape(Hv, Dv)
        q = q / np.sqrt(np.sum(q * q, axis=-1, keepdims=True) + 1e-6) / math.sqrt(Dk)
        k = k / np.sqrt(np.sum(k * k, axis=-1, keepdims=True) + 1e-6)
        beta = sigmoid(b)
        g = -np.exp(self.p(L + "A_log")) * softplus(a + self.p(L + "dt_bias"))
        o = np.zeros((Hv, Dv))
        S = self.S[i]
        for h in range(Hv):
            kh, qh = k[h // r], q[h // r]
            S[h] *= math.exp(g[h])
            delta = beta[h] * (v[h] - S[h].T @ kh)
            S[h] += np.outer(kh, delta)
            o[h] = S[h].T @ qh
        nw = self.p(L + "norm.weight")  # plain w, not 1 + w
        o = o / np.sqrt(np.mean(o * o, axis=-1, keepdims=True) + self.eps) * nw * silu(z)
        return self.p(L + "out_proj.weight") @ o.reshape(-1)

    def rope(self, x):  # x [heads, hd]; half-split rotation of the first self.rot dims
        half = self.rot // 2
        ang = self.pos * self.inv_freq
        c, s = np.cos(ang), np.sin(ang)
        x1, x2 = x[:, :half].copy(), x[:, half:self.rot].copy()
        x = x.copy()
        x[:, :half] = x1 * c - x2 * s
        x[:, half:self.rot] = x2 * c + x1 * s
        return x

    def full_attn(self, i, x):
        L = f"layers.{i}.self_attn."
        nh, nkv, hd = self.t["num_attention_heads"], self.t["num_key_value_heads"], self.hd
        qg = (self.p(L + "q_proj.weight") @ x).reshape(nh, 2 * hd)
        q, gate = qg[:, :hd], qg[:, hd:].reshape(-1)  # per head: [query | gate]
        k = (self.p(L + "k_proj.weight") @ x).reshape(nkv, hd)
        v = (self.p(L + "v_proj.weight") @ x).reshape(nkv, hd)
        q = self.rope(rms_1pw(q, self.p(L + "q_norm.weight"), self.eps))
        k = self.rope(rms_1pw(k, self.p(L + "k_norm.weight"), self.eps))
        self.kc[i].append(k)
        self.vc[i].append(v)
        K = np.stack(self.kc[i])  # [T, nkv, hd]
        V = np.stack(self.vc[i])
        out = np.zeros((nh, hd))
        for h in range(nh):
            kv = h // (nh // nkv)
            sc = K[:, kv] @ q[h] / math.sqrt(hd)
            pr = np.exp(sc - sc.max())
            pr /= pr.sum()
            out[h] = pr @ V[:, kv]
        return self.p(L + "o_proj.weight") @ (out.reshape(-1) * sigmoid(gate))

    def mlp(self, pre, x):
        return self.p(pre + "down_proj.weight") @ (silu(self.p(pre + "gate_proj.weight") @ x) * (self.p(pre + "up_proj.weight") @ x))

    def ffn(self, i, x):
        L = f"layers.{i}.mlp."
        if self.kind != "qwen3_next":
            return self.mlp(L, x)
        t = self.t
        logits = self.p(L + "gate.weight") @ x
        pr = np.exp(logits - logits.max())
        pr /= pr.sum()
        top = np.argsort(-pr, kind="stable")[: t["num_experts_per_tok"]]
        wts = pr[top] / pr[top].sum() if t["norm_topk_prob"] else pr[top]
        out = sum(w * self.mlp(L + f"experts.{e}.", x) for e, w in zip(top, wts))
        shared = sigmoid(self.p(L + "shared_expert_gate.weight") @ x)[0] * self.mlp(L + "shared_expert.", x)
        return out + shared

    def step(self, token):
        h = self.p("embed_tokens.weight")[token].copy()
        for i, lt in enumerate(self.layer_types):
            x = rms_1pw(h, self.p(f"layers.{i}.input_layernorm.weight"), self.eps)
            h = h + (self.linear_attn(i, x) if lt == "linear_attention" else self.full_attn(i, x))
            x = rms_1pw(h, self.p(f"layers.{i}.post_attention_layernorm.weight"), self.eps)
            h = h + self.ffn(i, x)
        self.pos += 1
        h = rms_1pw(h, self.p("norm.weight"), self.eps)
        head = self.p("embed_tokens.weight") if self.tied else self.w["lm_head.weight"]
        return head @ h


def chunked_vs_recurrent_self_test(T=150, C=64, Dk=16, Dv=8, seed=0):
    """The chunked form of NOTES.md (one value head) against the per-token recurrence, on random data."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((T, Dk)); k = rng.standard_normal((T, Dk)); v = rng.standard_normal((T, Dv))
    q = q / np.sqrt((q * q).sum(-1, keepdims=True) + 1e-6) / math.sqrt(Dk)
    k = k / np.sqrt((k * k).sum(-1, keepdims=True) + 1e-6)
    beta = sigmoid(rng.standard_normal(T)); g = -np.exp(rng.standard_normal(T) - 1.0)
    S = np.zeros((Dk, Dv)); ref = np.zeros((T, Dv))
    for t in range(T):
        S = S * math.exp(g[t]); S = S + np.outer(k[t], beta[t] * (v[t] - S.T @ k[t])); ref[t] = S.T @ q[t]
    S_end_ref = S
    S = np.zeros((Dk, Dv)); out = np.zeros((T, Dv))
    for c0 in range(0, T, C):
        qc, kc, vc, bc, gc = q[c0:c0 + C], k[c0:c0 + C], v[c0:c0 + C], beta[c0:c0 + C], g[c0:c0 + C]
        n = len(gc)
        gam = np.cumsum(gc)
        D = np.tril(np.exp(gam[:, None] - gam[None, :]))  # D[t, s] = exp(gam_t - gam_s), s <= t
        A = np.tril((bc[:, None] * kc) @ kc.T * D, -1)  # strictly lower
        Tm = np.eye(n) + A
        U = np.linalg.solve(Tm, bc[:, None] * vc)
        W = np.linalg.solve(Tm, (bc * np.exp(gam))[:, None] * kc)
        Vp = U - W @ S
        out[c0:c0 + n] = (qc * np.exp(gam)[:, None]) @ S + ((qc @ kc.T) * D) @ Vp
        S = math.exp(gam[-1]) * S + (kc * np.exp(gam[-1] - gam)[:, None]).T @ Vp
    d_out, d_state = float(np.abs(out - ref).max()), float(np.abs(S - S_end_ref).max())
    print(f"self-test: NOTES.md chunked form vs recurrent form, {T} tokens, chunks of {C}: output {d_out:.1e}, final state {d_state:.1e}")
    return d_out < 1e-9 and d_state < 1e-9


def main():
    worst = 0.0
    ok = chunked_vs_recurrent_self_test()
    for folder in sys.argv[1:]:
        ref = json.load(open(os.path.join(folder, "reference.json")))
        m = Model(folder)
        for case in ref["cases"]:
            m.reset()
            for t in case["prompt_ids"]:
                logits = m.step(t)
            d = float(np.max(np.abs(logits - np.array(case["first_logits"]))))
            greedy = []
            for _ in range(ref["new_tokens"]):
                nxt = int(np.argmax(logits))
                greedy.append(nxt)
                logits = m.step(nxt)
            same = greedy == case["greedy_ids"]
            ok &= same
            worst = max(worst, d)
            print(f"{os.path.basename(folder)} len {len(case['prompt_ids'])}: first-logit max diff {d:.2e}, greedy {'match' if same else 'DIFFER'}")
    print(f"worst first-logit diff {worst:.2e}; all greedy match: {ok}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
