/**
 * A byte-level BPE tokenizer.json as GGUF `tokenizer.ggml.*` metadata (gpt2
 * model), the way llama.cpp's converter writes it: tokens by id, token types
 * (1 normal, 3 control for special added tokens, 4 user-defined for the
 * others), merges as "left right" strings. The pre-tokenizer is named, not
 * carried: tests that need exact ids feed token ids.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { meta, type MetaValue } from './gguf-writer.js';

interface TokenizerJson {
  model: { type: string; vocab: Record<string, number>; merges: Array<string | [string, string]> };
  added_tokens: Array<{ id: number; content: string; special: boolean }>;
}

export function tokenizerJsonToGgufMeta(dir: string, eosToken: string): Array<[string, MetaValue]> {
  const json = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')) as TokenizerJson;
  if (json.model.type !== 'BPE') throw new Error(`tokenizerJsonToGgufMeta takes BPE tokenizers, not ${json.model.type}`);
  const size = Math.max(...Object.values(json.model.vocab), ...json.added_tokens.map((t) => t.id)) + 1;
  const tokens = new Array<string>(size).fill('');
  const types = new Array<number>(size).fill(1);
  for (const [token, id] of Object.entries(json.model.vocab)) tokens[id] = token;
  for (const t of json.added_tokens) {
    tokens[t.id] = t.content;
    types[t.id] = t.special ? 3 : 4;
  }
  for (let id = 0; id < size; id++) if (tokens[id] === '') [tokens[id], types[id]] = [`[PAD${id}]`, 5];
  const eos = tokens.indexOf(eosToken);
  if (eos < 0) throw new Error(`${eosToken} is not in the vocabulary`);
  return [
    ['tokenizer.ggml.model', meta.str('gpt2')],
    ['tokenizer.ggml.pre', meta.str('qwen2')],
    ['tokenizer.ggml.tokens', meta.strings(tokens)],
    ['tokenizer.ggml.token_type', meta.i32s(types)],
    ['tokenizer.ggml.merges', meta.strings(json.model.merges.map((m) => (typeof m === 'string' ? m : m.join(' '))))],
    ['tokenizer.ggml.eos_token_id', meta.u32(eos)],
  ];
}
