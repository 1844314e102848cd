"""Checks a qwen35 GGUF written by weft's test writer (test/support/qwen35-to-gguf.ts) against PyPI gguf's
own tables and quantizer, and against the converter's transforms written again here in numpy
(tools/hybrid/NOTES.md section 8). Outside CI; needs `pip install gguf==0.19.0 safetensors numpy`.

    python tools/hybrid/check_gguf.py file.gguf test/fixtures/qwen35-tiny   # (a Q8_0 file of that fixture)
"""
import json, re, sys
import numpy as np
import gguf
from safetensors import safe_open

path, folder = sys.argv[1], sys.argv[2]
arch = gguf.MODEL_ARCH.QWEN35
r = gguf.GGUFReader(path)
t = {x.name: x for x in r.tensors}
raw = lambda n: np.asarray(t[n].data).tobytes()
cfg = json.load(open(f'{folder}/config.json'))
cfg = cfg.get('text_config', cfg)
Hk, Hv, Dk, Dv = (cfg[k] for k in ('linear_num_key_heads', 'linear_num_value_heads', 'linear_key_head_dim', 'linear_value_head_dim'))
r_ = Hv // Hk
failures = []

def check(what, ok):
    print(('ok   ' if ok else 'FAIL ') + what)
    if not ok: failures.append(what)

# 1. Names: every tensor is one QWEN35 declares; every HF tensor maps (gguf's TensorNameMap) to one in the file.
allowed = {gguf.TENSOR_NAMES[x] for x in gguf.MODEL_TENSORS[arch]}
generic = lambda n: re.sub(r'^blk\.\d+\.', 'blk.{bid}.', n.rsplit('.', 1)[0] if n.endswith(('.weight', '.bias')) else n)
check('tensor names are QWEN35 tensors', all(generic(n) in allowed for n in t))
tmap = gguf.get_tensor_name_map(arch, int(r.fields['qwen35.block_count'].parts[-1][0]))
with safe_open(f'{folder}/model.safetensors', 'np') as f:
    names = [k for k in f.keys() if not k.startswith(('model.visual.', 'mtp.'))]
    def mapped(k):
        hf = k.replace('model.language_model.', 'model.')
        hf = hf[:-len('.dt_bias')] + '.dt_proj.bias' if hf.endswith('.dt_bias') else hf  # the converter's rename
        return tmap.get_name(hf, try_suffixes=('.weight', '.bias'))
    check('every HF tensor maps to a tensor of the file', all(mapped(k) in t for k in names if not (k == 'lm_head.weight' and 'output.weight' not in t)))

    # 2. Values: the converter's transforms, here in numpy; matrices through gguf.quants at the file's type.
    def tile(x, axis, block):  # grouped -> tiled value heads: swap (key head, head in group)
        s = list(x.shape)
        return np.swapaxes(x.reshape(s[:axis] + [Hk, r_, block] + s[axis + 1:]), axis, axis + 1).reshape(s)
    def stored(name, w):
        return gguf.quants.quantize(np.ascontiguousarray(w, np.float32), t[name].tensor_type).tobytes()
    prefix = 'model.language_model.' if any(k.startswith('model.language_model.') for k in names) else 'model.'
    for layer, types in enumerate(cfg['layer_types']):
        p, b = f'{prefix}layers.{layer}.', f'blk.{layer}.'
        get = lambda n: f.get_tensor(p + n).astype(np.float32)
        check(f'{b}attn_norm = input_layernorm + 1', raw(b + 'attn_norm.weight') == (get('input_layernorm.weight') + np.float32(1)).tobytes())
        check(f'{b}post_attention_norm = post_attention_layernorm + 1', raw(b + 'post_attention_norm.weight') == (get('post_attention_layernorm.weight') + np.float32(1)).tobytes())
        if types == 'full_attention':
            check(f'{b}attn_q', raw(b + 'attn_q.weight') == stored(b + 'attn_q.weight', get('self_attn.q_proj.weight')))
            check(f'{b}attn_q_norm = q_norm + 1', raw(b + 'attn_q_norm.weight') == (get('self_attn.q_norm.weight') + np.float32(1)).tobytes())
            continue
        L = 'linear_attn.'
        qkv = get(L + 'in_proj_qkv.weight')
        check(f'{b}attn_qkv (v rows tiled)', raw(b + 'attn_qkv.weight') == stored(b + 'attn_qkv.weight', np.concatenate([qkv[:2 * Hk * Dk], tile(qkv[2 * Hk * Dk:], 0, Dv)])))
        check(f'{b}attn_gate (rows tiled)', raw(b + 'attn_gate.weight') == stored(b + 'attn_gate.weight', tile(get(L + 'in_proj_z.weight'), 0, Dv)))
        check(f'{b}ssm_beta', raw(b + 'ssm_beta.weight') == stored(b + 'ssm_beta.weight', tile(get(L + 'in_proj_b.weight'), 0, 1)))
        check(f'{b}ssm_alpha', raw(b + 'ssm_alpha.weight') == stored(b + 'ssm_alpha.weight', tile(get(L + 'in_proj_a.weight'), 0, 1)))
        check(f'{b}ssm_out (columns tiled)', raw(b + 'ssm_out.weight') == stored(b + 'ssm_out.weight', tile(get(L + 'out_proj.weight'), 1, Dv)))
        conv = get(L + 'conv1d.weight').squeeze(1)
        check(f'{b}ssm_conv1d [C, K] (v channels tiled)', raw(b + 'ssm_conv1d.weight') == np.concatenate([conv[:2 * Hk * Dk], tile(conv[2 * Hk * Dk:], 0, Dv)]).tobytes())
        check(f'{b}ssm_dt.bias', raw(b + 'ssm_dt.bias') == tile(get(L + 'dt_bias'), 0, 1).tobytes())
        check(f'{b}ssm_a = -exp(A_log), 1 ulp', np.allclose(np.asarray(t[b + 'ssm_a'].data), -np.exp(tile(get(L + 'A_log'), 0, 1)), rtol=2e-7, atol=0))
        check(f'{b}ssm_norm as is', raw(b + 'ssm_norm.weight') == get(L + 'norm.weight').tobytes())
print(f'{len(failures)} failures')
sys.exit(1 if failures else 0)
