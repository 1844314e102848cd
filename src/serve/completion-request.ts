/**
 * POST /v1/completions body -> a text prompt (or token ids) and GenerateOptions.
 * `max_tokens` defaults to 16 here, as in the OpenAI API (and vLLM; `null` means
 * no limit but the context, as in vLLM); `logprobs`
 * is a count of alternatives (0-5 in OpenAI, up to 20 here).
 */

import type { GenerateOptions } from '../pipeline/options.js';
import { badRequest } from './errors.js';
import { optionalBoolean, optionalInteger, requireObject } from './fields.js';
import { checkModel, samplingOptions, streamFields, type ServedModel } from './sampling-fields.js';

export interface CompletionRequest {
  readonly prompt: string | number[];
  readonly options: GenerateOptions;
  readonly stream: boolean;
  readonly includeUsage: boolean;
  readonly echo: boolean;
  readonly logprobs: number | undefined;
}

const DEFAULT_MAX_TOKENS = 16;

export function parseCompletionRequest(input: unknown, served: ServedModel): CompletionRequest {
  const body = requireObject(input, 'the request body');
  checkModel(body, served);
  const options = samplingOptions(body);
  // Absent: 16, as OpenAI; an explicit null: up to the end of the context, as vLLM.
  if (body.max_tokens === undefined && body.max_completion_tokens === undefined) options.maxTokens ??= DEFAULT_MAX_TOKENS;
  const logprobs = optionalInteger(body, 'logprobs');
  if (logprobs !== undefined) options.logprobs = Math.max(1, logprobs);
  if (body.suffix !== undefined && body.suffix !== null) throw badRequest('suffix is not supported', 'suffix');
  return { prompt: parsePrompt(body.prompt), options, ...streamFields(body), echo: optionalBoolean(body, 'echo') ?? false, logprobs };
}

/** A string, an array of one string, or an array of token ids (several prompts would be a batch of requests: refused). */
function parsePrompt(value: unknown): string | number[] {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    if (value.length === 1 && typeof value[0] === 'string') return value[0];
    if (value.length > 0 && value.every((id) => Number.isInteger(id))) return value as number[];
    if (value.length > 1 && value.every((p) => typeof p === 'string' || Array.isArray(p))) {
      throw badRequest('several prompts in one request are not supported yet; send one request per prompt', 'prompt');
    }
  }
  throw badRequest('prompt must be a string, an array of one string, or an array of token ids', 'prompt');
}
