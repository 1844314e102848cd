/**
 * POST /v1/embeddings in OpenAI's shape: `input` a string, an array of
 * strings, token ids or arrays of token ids; `encoding_format` "float" or
 * "base64" (little-endian float32, as OpenAI sends it); `dimensions`. weft's
 * own fields, as vLLM names its similar ones: `prompt_name` / `prompt` (a
 * named or literal prompt before every text), `normalize`, `truncate`.
 */

import type { EmbedInput, EmbedOptions, EmbedResult } from '../embeddings/embed.js';
import { badRequest } from './errors.js';
import { optionalBoolean, optionalInteger, optionalString, requireObject } from './fields.js';
import { checkModel, type ServedModel } from './sampling-fields.js';

export interface EmbeddingsRequest {
  readonly input: EmbedInput;
  readonly options: EmbedOptions;
  readonly base64: boolean;
}

export function parseEmbeddingsRequest(input: unknown, served: ServedModel): EmbeddingsRequest {
  const body = requireObject(input, 'the request body');
  checkModel(body, served);
  const value = body.input;
  if (typeof value !== 'string' && !Array.isArray(value)) throw badRequest('input must be a string, an array of strings, or token ids', 'input');
  const format = optionalString(body, 'encoding_format') ?? 'float';
  if (format !== 'float' && format !== 'base64') throw badRequest('encoding_format must be "float" or "base64"', 'encoding_format');
  const dimensions = optionalInteger(body, 'dimensions');
  const promptName = optionalString(body, 'prompt_name');
  const prompt = optionalString(body, 'prompt');
  const normalize = optionalBoolean(body, 'normalize');
  const truncate = optionalBoolean(body, 'truncate');
  const options: EmbedOptions = {
    ...(dimensions !== undefined && { dimensions }),
    ...(promptName !== undefined && { promptName }),
    ...(prompt !== undefined && { prompt }),
    ...(normalize !== undefined && { normalize }),
    ...(truncate !== undefined && { truncate }),
  };
  return { input: value as EmbedInput, options, base64: format === 'base64' };
}

export function embeddingsResponse(result: EmbedResult, model: string, base64: boolean): object {
  return {
    object: 'list',
    data: result.embeddings.map((vector, index) => ({ object: 'embedding', index, embedding: base64 ? toBase64(vector) : Array.from(vector) })),
    model,
    usage: { prompt_tokens: result.usage.promptTokens, total_tokens: result.usage.promptTokens },
  };
}

function toBase64(vector: Float32Array): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((v, i) => bytes.writeFloatLE(v, i * 4));
  return bytes.toString('base64');
}
