/**
 * The request fields /v1/chat/completions and /v1/completions share, mapped
 * to weft's GenerateOptions by the table RemotePipeline writes them with
 * (pipeline/openai-fields.ts). Ranges are checked by the pipeline (its
 * InvalidOptionError is mapped back to the field name in errors.ts); here we
 * check types, and refuse clearly what weft cannot do yet. `response_format`
 * is guided generation (guided-fields.ts).
 */

import type { GenerateOptions } from '../pipeline/options.js';
import { SAMPLING_FIELDS, type SamplingField } from '../pipeline/openai-fields.js';
import { ApiError, badRequest } from './errors.js';
import { parseResponseFormat } from './guided-fields.js';
import { isJsonObject, optionalBoolean, optionalInteger, optionalNumber, optionalObject, type Json } from './fields.js';

export interface ServedModel {
  /** The name clients send as `model` (and /v1/models lists). */
  readonly name: string;
  /** The tool parser replies are read with, if any (decides how `tool_choice: "none"` is honoured). */
  readonly toolParser?: string | undefined;
  /** Tool-guided auto for chats with tools (`--enable-tool-guided-generation`). */
  readonly guidedTools?: boolean;
}

/** `model` must name the served model; it may be left out (vLLM allows that too). */
export function checkModel(body: Json, served: ServedModel): void {
  const model = body.model;
  if (model === undefined || model === null) return;
  if (typeof model !== 'string') throw badRequest('model must be a string', 'model');
  if (model !== served.name) {
    const message = `the model ${JSON.stringify(model)} does not exist; this server serves ${JSON.stringify(served.name)}`;
    throw new ApiError(404, 'not_found_error', message, 'model', 'model_not_found');
  }
}

export function samplingOptions(body: Json): GenerateOptions {
  const logitBias = optionalObject(body, 'logit_bias');
  if (logitBias !== undefined && Object.keys(logitBias).length > 0) throw badRequest('logit_bias is not supported', 'logit_bias');
  const options: GenerateOptions = {};
  const responseFormat = parseResponseFormat(body);
  if (responseFormat !== undefined) options.responseFormat = responseFormat;
  for (const entry of SAMPLING_FIELDS) {
    const value = readField(body, entry);
    if (value !== undefined) (options as Record<string, unknown>)[entry.option] = value;
  }
  // vLLM's "off" is -1; weft's is 0.
  if (options.topK === -1) options.topK = 0;
  return options;
}

/** One table field of a body, type-checked (a wrong type is a 400 naming the field); its alias first. */
function readField(body: Json, entry: SamplingField): unknown {
  if (entry.alias !== undefined && body[entry.alias] !== undefined && body[entry.alias] !== null) return readField(body, { ...entry, field: entry.alias, alias: undefined });
  const { field } = entry;
  switch (entry.kind) {
    case 'number':
      return optionalNumber(body, field);
    case 'integer':
      return optionalInteger(body, field);
    case 'boolean':
      return optionalBoolean(body, field);
    case 'stop': {
      const stop = body[field];
      if (stop === undefined || stop === null) return undefined;
      if (typeof stop === 'string' || (Array.isArray(stop) && stop.every((s) => typeof s === 'string'))) return stop;
      throw badRequest(`${field} must be a string or an array of strings`, field);
    }
    case 'speculative': {
      // false, or weft's speculative options: their keys and ranges are the pipeline's to check.
      const value = body[field];
      if (value === undefined || value === null) return undefined;
      if (value === false || isJsonObject(value)) return value;
      throw badRequest(`${field} must be false or an object like {"method": "prompt-lookup", "tokens": 4, "ngram": 2}`, field);
    }
    case 'integers': {
      const ids = body[field];
      if (ids === undefined || ids === null) return undefined;
      if (!Array.isArray(ids) || ids.some((id) => !Number.isInteger(id))) throw badRequest(`${field} must be an array of integers`, field);
      return ids;
    }
  }
}

/** `stream` and `stream_options.include_usage`. */
export function streamFields(body: Json): { stream: boolean; includeUsage: boolean } {
  const stream = optionalBoolean(body, 'stream') ?? false;
  const streamOptions = optionalObject(body, 'stream_options');
  const includeUsage = streamOptions === undefined ? false : optionalBoolean(streamOptions, 'include_usage') ?? false;
  if (streamOptions !== undefined && typeof streamOptions.include_usage !== 'boolean' && streamOptions.include_usage !== undefined) {
    throw badRequest('stream_options.include_usage must be a boolean', 'stream_options.include_usage');
  }
  return { stream, includeUsage };
}
