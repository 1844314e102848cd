/**
 * Converts a BertModel or NomicBertModel folder (config.json + float32
 * safetensors + a WordPiece tokenizer.json) to a `bert` or `nomic-bert` GGUF
 * laid out as llama.cpp's converter writes it (conversion/bert.py and
 * gguf-py's tensor_mapping.py, read 2026-12-04; none of their code): llama.cpp
 * names (nomic's Wqkv kept fused as attn_qkv, fc11 / fc12 as ffn_up / ffn_gate),
 * `nomic-bert.rope.freq_base`, 1-D tensors and the position / token-type
 * tables in F32, the vocabulary padded to the embedding's rows with unused
 * [PADi] tokens and in its "phantom space" form (a
 * word-initial piece gets "▁", a continuation loses "##", control tokens stay),
 * the [CLS] id as bos_token_id and [SEP] as seperator_token_id,
 * `bert.attention.causal` false, `bert.pooling_type` from the folder.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readAllTensors } from '../model-files/safetensors-writer.js';
import { toF16, toQ8_0 } from './ggml-quantize.js';
import { encodeGguf, meta, type MetaValue, type TensorSpec } from './gguf-writer.js';
import type { MatrixType } from './hf-to-gguf.js';

const NAMES: Array<[RegExp, string]> = [
  [/^embeddings\.word_embeddings\.weight$/, 'token_embd.weight'],
  [/^embeddings\.position_embeddings\.weight$/, 'position_embd.weight'],
  [/^embeddings\.token_type_embeddings\.weight$/, 'token_types.weight'],
  [/^embeddings\.LayerNorm\.(weight|bias)$/, 'token_embd_norm.$1'],
  [/^encoder\.layer\.(\d+)\.attention\.self\.query\.(weight|bias)$/, 'blk.$1.attn_q.$2'],
  [/^encoder\.layer\.(\d+)\.attention\.self\.key\.(weight|bias)$/, 'blk.$1.attn_k.$2'],
  [/^encoder\.layer\.(\d+)\.attention\.self\.value\.(weight|bias)$/, 'blk.$1.attn_v.$2'],
  [/^encoder\.layer\.(\d+)\.attention\.output\.dense\.(weight|bias)$/, 'blk.$1.attn_output.$2'],
  [/^encoder\.layer\.(\d+)\.attention\.output\.LayerNorm\.(weight|bias)$/, 'blk.$1.attn_output_norm.$2'],
  [/^encoder\.layer\.(\d+)\.intermediate\.dense\.(weight|bias)$/, 'blk.$1.ffn_up.$2'],
  [/^encoder\.layer\.(\d+)\.output\.dense\.(weight|bias)$/, 'blk.$1.ffn_down.$2'],
  [/^encoder\.layer\.(\d+)\.output\.LayerNorm\.(weight|bias)$/, 'blk.$1.layer_output_norm.$2'],
];
const NOMIC_NAMES: Array<[RegExp, string]> = [
  [/^embeddings\.word_embeddings\.weight$/, 'token_embd.weight'],
  [/^embeddings\.token_type_embeddings\.weight$/, 'token_types.weight'],
  [/^emb_ln\.(weight|bias)$/, 'token_embd_norm.$1'],
  [/^encoder\.layers\.(\d+)\.attn\.Wqkv\.weight$/, 'blk.$1.attn_qkv.weight'],
  [/^encoder\.layers\.(\d+)\.attn\.out_proj\.weight$/, 'blk.$1.attn_output.weight'],
  [/^encoder\.layers\.(\d+)\.norm1\.(weight|bias)$/, 'blk.$1.attn_output_norm.$2'],
  [/^encoder\.layers\.(\d+)\.mlp\.fc11\.weight$/, 'blk.$1.ffn_up.weight'],
  [/^encoder\.layers\.(\d+)\.mlp\.fc12\.weight$/, 'blk.$1.ffn_gate.weight'],
  [/^encoder\.layers\.(\d+)\.mlp\.fc2\.weight$/, 'blk.$1.ffn_down.weight'],
  [/^encoder\.layers\.(\d+)\.norm2\.(weight|bias)$/, 'blk.$1.layer_output_norm.$2'],
];
const POOLING_TYPE: Record<string, number> = { mean: 1, cls: 2, lasttoken: 3 };

export async function convertBertToGguf(dir: string, file: string, matrixType: MatrixType = 'F32', extraMeta: Array<[string, MetaValue]> = []): Promise<void> {
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, number> & { architectures?: string[]; rope_parameters?: { rope_theta: number } };
  const nomic = config.architectures?.[0] === 'NomicBertModel';
  const names = nomic ? NOMIC_NAMES : NAMES;
  const tokenizer = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')) as {
    model: { type: string; vocab: Record<string, number> };
    added_tokens: Array<{ id: number; content: string; special: boolean }>;
  };
  if (tokenizer.model.type !== 'WordPiece') throw new Error(`${dir}: convertBertToGguf takes WordPiece tokenizers`);
  const tensors: TensorSpec[] = [];
  for (const t of await readAllTensors(join(dir, 'model.safetensors'))) {
    const name = t.name.replace(/^bert\./, '');
    if (name === 'embeddings.position_ids' || name.startsWith('pooler.')) continue;
    const rule = names.find(([re]) => re.test(name));
    if (!rule) throw new Error(`no GGUF name for ${t.name}`);
    const values = new Float32Array(t.data.slice().buffer);
    // The position and token-type tables are added to the embeddings (a ggml add, which takes no quantized
    // operand): the converter keeps them F32, like the 1-D tensors.
    const added = /^(position_embd|token_types)\./.test(name.replace(rule[0], rule[1]));
    const matrix = t.shape.length === 2 && !added;
    const type = !matrix || matrixType === 'F32' ? 0 : matrixType === 'F16' || t.shape[1]! % 32 !== 0 ? 1 : 8;
    const data = type === 0 ? new Uint8Array(values.buffer) : type === 1 ? toF16(values) : toQ8_0(values);
    tensors.push({ name: name.replace(rule[0], rule[1]), type, dims: [...t.shape].reverse(), data });
  }
  // Padded to the embedding's rows with unused [PADi] tokens, as the converter pads (llama.cpp wants one token per row).
  const size = Math.max(Math.max(...Object.values(tokenizer.model.vocab)) + 1, config.vocab_size ?? 0);
  const tokens = Array.from({ length: size }, (_, i) => `\u2581[PAD${i}]`);
  const types = new Array<number>(size).fill(5);
  for (const [piece, id] of Object.entries(tokenizer.model.vocab)) [tokens[id], types[id]] = [piece.startsWith('##') ? piece.slice(2) : `\u2581${piece}`, 1];
  for (const t of tokenizer.added_tokens) if (t.special) [tokens[t.id], types[t.id]] = [t.content, 3];
  const id = (token: string) => {
    const at = tokens.indexOf(token);
    if (at < 0) throw new Error(`${token} is not in the vocabulary`);
    return at;
  };
  const pooling = JSON.parse(readFileSync(join(dir, '1_Pooling', 'config.json'), 'utf8')) as Record<string, unknown>;
  const mode = typeof pooling.pooling_mode === 'string' ? pooling.pooling_mode : pooling.pooling_mode_mean_tokens ? 'mean' : pooling.pooling_mode_cls_token ? 'cls' : 'lasttoken';
  const a = nomic ? 'nomic-bert' : 'bert';
  const metadata: Array<[string, MetaValue]> = [
    ['general.architecture', meta.str(a)],
    ['general.file_type', meta.u32(matrixType === 'F32' ? 0 : matrixType === 'F16' ? 1 : 7)],
    [`${a}.block_count`, meta.u32(config.num_hidden_layers!)],
    [`${a}.context_length`, meta.u32(config.max_position_embeddings!)],
    [`${a}.embedding_length`, meta.u32(config.hidden_size!)],
    [`${a}.feed_forward_length`, meta.u32(config.intermediate_size!)],
    [`${a}.attention.head_count`, meta.u32(config.num_attention_heads!)],
    [`${a}.attention.layer_norm_epsilon`, meta.f32(config.layer_norm_eps ?? 1e-12)],
    [`${a}.attention.causal`, meta.bool(false)],
    [`${a}.pooling_type`, meta.u32(POOLING_TYPE[mode]!)],
    ...(nomic ? [[`${a}.rope.freq_base`, meta.f32(config.rope_parameters?.rope_theta ?? 1000)] as [string, MetaValue]] : []),
    ['tokenizer.ggml.model', meta.str('bert')],
    ['tokenizer.ggml.pre', meta.str('default')],
    ['tokenizer.ggml.tokens', meta.strings(tokens)],
    ['tokenizer.ggml.token_type', meta.i32s(types)],
    ['tokenizer.ggml.token_type_count', meta.u32(config.type_vocab_size ?? 2)],
    ['tokenizer.ggml.bos_token_id', meta.u32(id('[CLS]'))],
    ['tokenizer.ggml.seperator_token_id', meta.u32(id('[SEP]'))],
    ['tokenizer.ggml.unknown_token_id', meta.u32(id('[UNK]'))],
    ['tokenizer.ggml.padding_token_id', meta.u32(id('[PAD]'))],
  ];
  const replaced = new Set(extraMeta.map(([key]) => key));
  writeFileSync(file, encodeGguf({ metadata: [...metadata.filter(([key]) => !replaced.has(key)), ...extraMeta], tensors }));
}
