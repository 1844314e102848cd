/**
 * weft's request options and the OpenAI request fields they travel as: one
 * table for both ways across the wire. `weft serve` reads a body's fields
 * into options (serve/sampling-fields.ts) and names a refused option by the
 * field the client sent (serve/errors.ts); RemotePipeline writes options into
 * a body (remote/request-body.ts). Besides OpenAI's own fields, the vLLM/OVMS
 * extras those servers accept (`top_k`, `min_p`, `repetition_penalty`,
 * `ignore_eos`, `stop_token_ids`, `skip_special_tokens`, `chat_template_kwargs`),
 * and weft's own `speculative`.
 */

import type { ChatOptions, GenerateOptions } from './options.js';

/**
 * How a field's value is spelt: a number, an integer, a boolean, a string or strings (`stop`),
 * integers, or weft's `speculative` (false, or an object in weft's own spelling).
 */
export type FieldKind = 'number' | 'integer' | 'boolean' | 'stop' | 'integers' | 'speculative';

export interface SamplingField {
  readonly option: keyof GenerateOptions;
  readonly field: string;
  readonly kind: FieldKind;
  /** A newer spelling a server reads first (OpenAI's `max_completion_tokens`). */
  readonly alias?: string;
}

/** The options a completion and a chat request share, written as they are. */
export const SAMPLING_FIELDS: readonly SamplingField[] = [
  { option: 'maxTokens', field: 'max_tokens', kind: 'integer', alias: 'max_completion_tokens' },
  { option: 'temperature', field: 'temperature', kind: 'number' },
  { option: 'topP', field: 'top_p', kind: 'number' },
  { option: 'topK', field: 'top_k', kind: 'integer' },
  { option: 'minP', field: 'min_p', kind: 'number' },
  { option: 'repetitionPenalty', field: 'repetition_penalty', kind: 'number' },
  { option: 'presencePenalty', field: 'presence_penalty', kind: 'number' },
  { option: 'frequencyPenalty', field: 'frequency_penalty', kind: 'number' },
  { option: 'seed', field: 'seed', kind: 'integer' },
  { option: 'stop', field: 'stop', kind: 'stop' },
  { option: 'stopTokenIds', field: 'stop_token_ids', kind: 'integers' },
  { option: 'ignoreEos', field: 'ignore_eos', kind: 'boolean' },
  { option: 'skipSpecialTokens', field: 'skip_special_tokens', kind: 'boolean' },
  { option: 'n', field: 'n', kind: 'integer' },
  // weft's own: only `weft serve` reads it (docs/speculative.md); RemotePipeline sends it when set.
  { option: 'speculative', field: 'speculative', kind: 'speculative' },
];

/**
 * The options that travel in a shape of their own (written and read beside the
 * table's): `logprobs` counts alternatives where OpenAI sends `logprobs: true`
 * and `top_logprobs`; guided generation's two are OpenAI objects.
 */
export const SHAPED_FIELDS: Readonly<Partial<Record<keyof ChatOptions | 'prompt' | 'messages', string>>> = {
  logprobs: 'top_logprobs',
  responseFormat: 'response_format',
  toolChoice: 'tool_choice',
  parallelToolCalls: 'parallel_tool_calls',
  templateKwargs: 'chat_template_kwargs',
  tools: 'tools',
  prompt: 'prompt',
  messages: 'messages',
};

const FIELD_OF_OPTION = new Map<string, string>([...SAMPLING_FIELDS.map((f) => [f.option, f.field] as const), ...Object.entries(SHAPED_FIELDS)]);

/** Guided options carry a path (`responseFormat.schema.properties.x.pattern`); the field keeps it in the client's spelling. */
const FIELD_OF_OPTION_PREFIX: readonly [string, string][] = [
  ['responseFormat.schema', 'response_format.json_schema.schema'],
  ['responseFormat', 'response_format'],
  ['toolChoice', 'tool_choice'],
];

/** The request field an option (as an InvalidOptionError names it) travels as; an unknown name as it is. */
export function fieldOfOption(option: string): string {
  const exact = FIELD_OF_OPTION.get(option);
  if (exact !== undefined) return exact;
  for (const [prefix, field] of FIELD_OF_OPTION_PREFIX) {
    if (option === prefix || option.startsWith(`${prefix}.`) || option.startsWith(`${prefix}[`)) return field + option.slice(prefix.length);
  }
  return option;
}
