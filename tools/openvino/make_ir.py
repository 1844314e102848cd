"""Build an OpenVINO IR LLM folder from a Qwen3 safetensors folder, with OpenVINO's own opset API.

    python3 tools/openvino/make_ir.py --model models/weft-demo --out models/weft-demo-openvino/f32
    python3 tools/openvino/make_ir.py --model models/weft-demo --out models/weft-demo-openvino/int8 --weights int8
    python3 tools/openvino/make_ir.py --model models/weft-demo --out models/weft-demo-openvino/int4 --weights int4
    python3 tools/openvino/make_ir.py --random qwen3-0.6b --out /tmp/qwen3-0.6b-int8 --weights int8

--random SHAPE builds a benchmark IR without a checkpoint: the named architecture's config.json with
seeded random weights (normal, std 0.02; norms 1) and a word-level tokenizer.json of one token per id
("t0", "t1", ...), so weft and openvino.genai load the folder and run token ids; its text is meaningless.

Needs only the pinned `openvino` wheel and numpy (no PyTorch, no optimum, no nncf), so CI can
check that the committed IR is exactly what this script makes (test/openvino/ir-recipe.test.ts).

The graph is the stateful SDPA graph optimum-intel exports for Qwen3ForCausalLM: inputs
input_ids / attention_mask / position_ids / beam_idx, one ReadValue -> Gather(beam_idx) ->
Concat -> Assign chain per layer for K and for V (layout [batch, kv_heads, seq, head_dim]),
GQA by Unsqueeze -> Broadcast -> Reshape, ScaledDotProductAttention, output "logits".
That is the shape `ov::pass::SDPAToPagedAttention` (which weft and openvino.genai run at
load) is written for. The arithmetic follows transformers' Qwen3 in float32: RMSNorm
x * rsqrt(mean(x^2) + eps) * w, q/k RMSNorm per head before RoPE, rotate-half RoPE with
inverse frequencies computed in float32 the way transformers computes them.

Weights:
  f32   every matrix as f32 constants (the reference for equality tests).
  int8  every matrix (embedding and LM head included) as u8 with a per-output-channel scale
        and zero point: Constant(u8) -> Convert -> Subtract(zp) -> Multiply(scale), the
        pattern OpenVINO's plugins run as compressed weights (what nncf's INT8_ASYM makes).
  int4  the attention and MLP matrices as u4 in groups of 32 input channels with a scale and
        zero point per group (nncf's INT4_ASYM, group 32); embedding / LM head stay int8 as
        nncf's default backup precision does.
"""
import argparse
import json
import math
import os
import shutil
import struct

import numpy as np
import openvino as ov
from openvino import opset13 as ops
from openvino.op.util import Variable, VariableInfo

GROUP = 32
COPIED = ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json', 'tools.json']


def read_safetensors(path):
    with open(path, 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == '__metadata__':
            continue
        if info['dtype'] != 'F32':
            raise SystemExit(f'{path}: {name} is {info["dtype"]}; this recipe reads F32 safetensors')
        a, b = info['data_offsets']
        out[name] = np.frombuffer(data[a:b], dtype=np.float32).reshape(info['shape'])
    return out


# Hugging Face config.json of the shapes --random builds (the published configs' sizes).
RANDOM_SHAPES = {
    'qwen3-0.6b': {
        'architectures': ['Qwen3ForCausalLM'], 'model_type': 'qwen3', 'hidden_size': 1024, 'intermediate_size': 3072,
        'num_hidden_layers': 28, 'num_attention_heads': 16, 'num_key_value_heads': 8, 'head_dim': 128,
        'vocab_size': 151936, 'max_position_embeddings': 40960, 'rms_norm_eps': 1e-6, 'rope_theta': 1000000.0,
        'tie_word_embeddings': True, 'hidden_act': 'silu', 'torch_dtype': 'float32',
        'bos_token_id': 151643, 'eos_token_id': 151645,
    },
}


def random_checkpoint(shape, seed=0):
    """(config, tensors) of `shape` with seeded random weights, named as a Hugging Face Qwen3 checkpoint."""
    cfg = dict(RANDOM_SHAPES[shape])
    rng = np.random.default_rng(seed)
    hidden, inter, head_dim = cfg['hidden_size'], cfg['intermediate_size'], cfg['head_dim']
    heads, kv_heads = cfg['num_attention_heads'], cfg['num_key_value_heads']

    def matrix(rows, cols):
        return (rng.standard_normal((rows, cols), dtype=np.float32) * np.float32(0.02))

    t = {'model.embed_tokens.weight': matrix(cfg['vocab_size'], hidden), 'model.norm.weight': np.ones(hidden, np.float32)}
    for i in range(cfg['num_hidden_layers']):
        p = f'model.layers.{i}.'
        t[p + 'input_layernorm.weight'] = np.ones(hidden, np.float32)
        t[p + 'post_attention_layernorm.weight'] = np.ones(hidden, np.float32)
        t[p + 'self_attn.q_norm.weight'] = np.ones(head_dim, np.float32)
        t[p + 'self_attn.k_norm.weight'] = np.ones(head_dim, np.float32)
        t[p + 'self_attn.q_proj.weight'] = matrix(heads * head_dim, hidden)
        t[p + 'self_attn.k_proj.weight'] = matrix(kv_heads * head_dim, hidden)
        t[p + 'self_attn.v_proj.weight'] = matrix(kv_heads * head_dim, hidden)
        t[p + 'self_attn.o_proj.weight'] = matrix(hidden, heads * head_dim)
        t[p + 'mlp.gate_proj.weight'] = matrix(inter, hidden)
        t[p + 'mlp.up_proj.weight'] = matrix(inter, hidden)
        t[p + 'mlp.down_proj.weight'] = matrix(hidden, inter)
    return cfg, t


def write_random_text_files(cfg, out):
    """config.json, generation_config.json and a word-level tokenizer.json of one token per id."""
    vocab = {f't{i}': i for i in range(cfg['vocab_size'])}
    tokenizer = {'version': '1.0', 'truncation': None, 'padding': None, 'added_tokens': [], 'normalizer': None,
                 'pre_tokenizer': {'type': 'WhitespaceSplit'}, 'post_processor': None,
                 'decoder': None, 'model': {'type': 'WordLevel', 'vocab': vocab, 'unk_token': 't0'}}
    files = {'config.json': cfg, 'tokenizer.json': tokenizer, 'tokenizer_config.json': {},
             'generation_config.json': {'eos_token_id': cfg['eos_token_id'], 'bos_token_id': cfg['bos_token_id']}}
    for name, value in files.items():
        with open(os.path.join(out, name), 'w') as f:
            json.dump(value, f)


def const(array):
    return ops.constant(np.ascontiguousarray(array))


def i64(values):
    return ops.constant(np.array(values, dtype=np.int64))


def quant_u8_rows(w):
    """Per-row asymmetric u8: w ~ (q - zp) * scale."""
    lo = np.minimum(w.min(axis=1, keepdims=True), 0).astype(np.float32)
    hi = np.maximum(w.max(axis=1, keepdims=True), 0).astype(np.float32)
    scale = np.where(hi > lo, (hi - lo) / 255, 1).astype(np.float32)
    zp = np.clip(np.round(-lo / scale), 0, 255).astype(np.uint8)
    q = np.clip(np.round(w / scale) + zp, 0, 255).astype(np.uint8)
    return q, zp, scale


def decompressed(q, zp, scale, low_type):
    """Constant(low) -> Convert(f32) -> Subtract(Convert(zp)) -> Multiply(scale)."""
    qc = ops.constant(q, dtype=low_type)
    zc = ops.constant(zp, dtype=low_type)
    x = ops.subtract(ops.convert(qc, ov.Type.f32), ops.convert(zc, ov.Type.f32))
    return ops.multiply(x, const(scale))


def weight(w, mode, embedding=False):
    """A [out, in] matrix as a node producing f32 [out, in]."""
    if mode == 'f32':
        return const(w)
    if mode == 'int8' or embedding or w.shape[1] % GROUP != 0:
        q, zp, scale = quant_u8_rows(w)
        return decompressed(q, zp, scale, ov.Type.u8)
    rows, cols = w.shape
    g = w.reshape(rows, cols // GROUP, GROUP)
    lo = np.minimum(g.min(axis=2, keepdims=True), 0).astype(np.float32)
    hi = np.maximum(g.max(axis=2, keepdims=True), 0).astype(np.float32)
    scale = np.where(hi > lo, (hi - lo) / 15, 1).astype(np.float32)
    zp = np.clip(np.round(-lo / scale), 0, 15).astype(np.uint8)
    q = np.clip(np.round(g / scale) + zp, 0, 15).astype(np.uint8)
    return ops.reshape(decompressed(q, zp, scale, ov.Type.u4), i64([rows, cols]), False)


def linear(x, w):
    return ops.matmul(x, w, False, True)


def rms_norm(x, w, eps):
    var = ops.reduce_mean(ops.multiply(x, x), i64([-1]), True)
    return ops.multiply(ops.divide(x, ops.sqrt(ops.add(var, const(np.float32(eps))))), const(w.astype(np.float32)))


def rotate_half(x, half):
    x1 = ops.slice(x, i64([0]), i64([half]), i64([1]), i64([3]))
    x2 = ops.slice(x, i64([half]), i64([2 * half]), i64([1]), i64([3]))
    return ops.concat([ops.negative(x2), x1], 3)


def inv_freq(cfg, head_dim):
    rope = cfg.get('rope_parameters') or {}
    theta = rope.get('rope_theta', cfg.get('rope_theta', 10000.0))
    if rope.get('rope_type', 'default') != 'default':
        raise SystemExit('this recipe supports rope_type "default" only')
    # As the CPU backend does (src/model-files/rope.ts): f32 exponent, pow in double, rounded to f32.
    # Not numpy's float32 power: it runs SVML on AVX-512 CPUs and libm elsewhere, and their last bits
    # differ, so the committed IR would depend on the CPU that made it.
    f32 = lambda v: float(np.float32(v))
    return np.array([f32(1.0 / f32(math.pow(theta, f32(j / head_dim))))
                     for j in range(0, head_dim, 2)], dtype=np.float32)


def build(cfg, t, mode):
    hidden = cfg['hidden_size']
    heads = cfg['num_attention_heads']
    kv_heads = cfg['num_key_value_heads']
    head_dim = cfg.get('head_dim') or hidden // heads
    eps = cfg['rms_norm_eps']
    layers = cfg['num_hidden_layers']
    group = heads // kv_heads

    input_ids = ops.parameter([-1, -1], ov.Type.i64, name='input_ids')
    attention_mask = ops.parameter([-1, -1], ov.Type.i64, name='attention_mask')
    position_ids = ops.parameter([-1, -1], ov.Type.i64, name='position_ids')
    beam_idx = ops.parameter([-1], ov.Type.i32, name='beam_idx')
    for p in (input_ids, attention_mask, position_ids, beam_idx):
        p.output(0).set_names({p.get_friendly_name()})

    embed_w = t['model.embed_tokens.weight']
    embed = weight(embed_w, mode, embedding=True)
    x = ops.gather(embed, input_ids, i64(0))  # [B, S, hidden]

    # RoPE tables [B, 1, S, head_dim] from position_ids, as transformers computes them.
    freqs = ops.matmul(const(inv_freq(cfg, head_dim).reshape(1, -1, 1)),
                       ops.unsqueeze(ops.convert(position_ids, ov.Type.f32), i64([1])), False, False)
    freqs = ops.transpose(freqs, i64([0, 2, 1]))  # [B, S, D/2]
    emb = ops.concat([freqs, freqs], 2)
    cos = ops.unsqueeze(ops.cos(emb), i64([1]))
    sin = ops.unsqueeze(ops.sin(emb), i64([1]))

    # Causal mask [B, 1, S, S_total] from attention_mask: key j visible to query i iff
    # j <= past + i and attention_mask[j] == 1 (past = S_total - S).
    q_len = ops.gather(ops.shape_of(input_ids), i64(1), i64(0))
    total = ops.gather(ops.shape_of(attention_mask), i64(1), i64(0))
    past = ops.subtract(total, q_len)
    q_pos = ops.add(ops.range(i64(0), q_len, i64(1), ov.Type.i64), past)
    k_pos = ops.range(i64(0), total, i64(1), ov.Type.i64)
    causal = ops.less_equal(ops.unsqueeze(k_pos, i64([0])), ops.unsqueeze(q_pos, i64([1])))  # [S, S_total]
    padded = ops.unsqueeze(ops.unsqueeze(ops.convert(attention_mask, ov.Type.boolean), i64([1])), i64([1]))
    visible = ops.logical_and(ops.unsqueeze(ops.unsqueeze(causal, i64([0])), i64([0])), padded)
    mask = ops.select(visible, const(np.float32(0)), const(np.float32(-np.inf)))

    batch = ops.gather(ops.shape_of(input_ids), i64([0]), i64(0))
    empty_kv = ops.broadcast(const(np.float32(0)), ops.concat([batch, i64([kv_heads, 0, head_dim])], 0))
    sinks = []
    for i in range(layers):
        p = f'model.layers.{i}.'
        h = rms_norm(x, t[p + 'input_layernorm.weight'], eps)

        def heads_of(proj, n, norm):
            y = ops.reshape(linear(h, weight(t[p + f'self_attn.{proj}.weight'], mode)), i64([0, 0, n, head_dim]), True)
            if norm:
                y = rms_norm(y, t[p + f'self_attn.{norm}.weight'], eps)
            return ops.transpose(y, i64([0, 2, 1, 3]))  # [B, n, S, D]

        q = heads_of('q_proj', heads, 'q_norm')
        k = heads_of('k_proj', kv_heads, 'k_norm')
        v = heads_of('v_proj', kv_heads, None)
        half = head_dim // 2
        q = ops.add(ops.multiply(q, cos), ops.multiply(rotate_half(q, half), sin))
        k = ops.add(ops.multiply(k, cos), ops.multiply(rotate_half(k, half), sin))

        def cached(new, kind):
            name = f'past_key_values.{i}.{kind}present.{i}.{kind}'
            info = VariableInfo()
            info.data_shape = ov.PartialShape([-1, kv_heads, -1, head_dim])
            info.data_type = ov.Type.f32
            info.variable_id = name
            var = Variable(info)
            past_kv = ops.gather(ops.read_value(empty_kv, var), beam_idx, i64(0))
            full = ops.concat([past_kv, new], 2)
            sinks.append(ov.op.assign(full, var))
            if group == 1:
                return full
            wide = ops.broadcast(ops.unsqueeze(full, i64([2])),
                                 ops.concat([batch, i64([kv_heads, group]), ops.gather(ops.shape_of(full), i64([2, 3]), i64(0))], 0))
            return ops.reshape(wide, i64([0, heads, -1, head_dim]), True)

        attn = ops.scaled_dot_product_attention(q, cached(k, 'key'), cached(v, 'value'), mask,
                                                const(np.float32(1.0 / np.sqrt(head_dim))), causal=False)
        attn = ops.reshape(ops.transpose(attn, i64([0, 2, 1, 3])), i64([0, 0, heads * head_dim]), True)
        x = ops.add(x, linear(attn, weight(t[p + 'self_attn.o_proj.weight'], mode)))
        h = rms_norm(x, t[p + 'post_attention_layernorm.weight'], eps)
        gate = linear(h, weight(t[p + 'mlp.gate_proj.weight'], mode))
        up = linear(h, weight(t[p + 'mlp.up_proj.weight'], mode))
        x = ops.add(x, linear(ops.multiply(ops.swish(gate), up), weight(t[p + 'mlp.down_proj.weight'], mode)))

    x = rms_norm(x, t['model.norm.weight'], eps)
    head_w = embed_w if cfg.get('tie_word_embeddings') else t['lm_head.weight']
    logits = linear(x, embed if cfg.get('tie_word_embeddings') else weight(head_w, mode, embedding=True))
    result = ops.result(logits)
    result.output(0).set_names({'logits'})
    result.set_friendly_name('logits')
    model = ov.Model([result], sinks, [input_ids, attention_mask, position_ids, beam_idx], 'weft-qwen3')
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    source = ap.add_mutually_exclusive_group(required=True)
    source.add_argument('--model', help='Hugging Face Qwen3 folder (config.json, model.safetensors)')
    source.add_argument('--random', choices=sorted(RANDOM_SHAPES), help='a benchmark IR of this shape, random weights')
    ap.add_argument('--out', required=True)
    ap.add_argument('--weights', choices=['f32', 'int8', 'int4'], default='f32')
    args = ap.parse_args()
    if args.random:
        cfg, tensors = random_checkpoint(args.random)
    else:
        with open(os.path.join(args.model, 'config.json')) as f:
            cfg = json.load(f)
        if cfg.get('model_type') != 'qwen3':
            raise SystemExit(f'{args.model}: model_type {cfg.get("model_type")}; this recipe builds qwen3')
        tensors = read_safetensors(os.path.join(args.model, 'model.safetensors'))
    model = build(cfg, tensors, args.weights)
    os.makedirs(args.out, exist_ok=True)
    if args.random:
        write_random_text_files(cfg, args.out)
    # compress_to_fp16=False: f32 stays f32 (the reference); the compressed modes are already low-bit.
    ov.save_model(model, os.path.join(args.out, 'openvino_model.xml'), compress_to_fp16=False)
    for name in COPIED if args.model else []:
        src = os.path.join(args.model, name)
        if os.path.exists(src):
            shutil.copyfile(src, os.path.join(args.out, name))
    print(f'{args.out}: {args.weights} IR, {os.path.getsize(os.path.join(args.out, "openvino_model.bin"))} bytes of weights')


if __name__ == '__main__':
    main()
