/**
 * The request fields /v1/chat/completions and /v1/completions share, mapped
 * to weft's GenerateOptions. Ranges are checked by the pipeline (its
 * InvalidOptionError is mapped back to the field name in errors.ts); here we
 * check types, and refuse clearly what weft cannot do yet. `response_format`
 * is guided generation (guided-fields.ts).
 */

import type { GenerateOptions } from '../index.js';
import { ApiError, badRequest } from './errors.js';
import { parseResponseFormat } from './guided-fields.js';
import { optionalBoolean, optionalInteger, optionalNumber, optionalObject, type Json } from './fields.js';

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
  const n = optionalInteger(body, 'n');
  if (n !== undefined && n !== 1) throw badRequest('n > 1 is not supported yet; send n = 1 (or several requests)', 'n');
  const logitBias = optionalObject(body, 'logit_bias');
  if (logitBias !== undefined && Object.keys(logitBias).length > 0) throw badRequest('logit_bias is not supported', 'logit_bias');
  const options: GenerateOptions = {};
  const responseFormat = parseResponseFormat(body);
  if (responseFormat !== undefined) options.responseFormat = responseFormat;
  const maxTokens = optionalInteger(body, 'max_completion_tokens') ?? optionalInteger(body, 'max_tokens');
  if (maxTokens !== undefined) options.maxTokens = maxTokens;
  const temperature = optionalNumber(body, 'temperature');
  if (temperature !== undefined) options.temperature = temperature;
  const topP = optionalNumber(body, 'top_p');
  if (topP !== undefined) options.topP = topP;
  const topK = optionalInteger(body, 'top_k');
  // vLLM's "off" is -1; weft's is 0.
  if (topK !== undefined) options.topK = topK === -1 ? 0 : topK;
  const minP = optionalNumber(body, 'min_p');
  if (minP !== undefined) options.minP = minP;
  const presence = optionalNumber(body, 'presence_penalty');
  if (presence !== undefined) options.presencePenalty = presence;
  const frequency = optionalNumber(body, 'frequency_penalty');
  if (frequency !== undefined) options.frequencyPenalty = frequency;
  const repetition = optionalNumber(body, 'repetition_penalty');
  if (repetition !== undefined) options.repetitionPenalty = repetition;
  const seed = optionalInteger(body, 'seed');
  if (seed !== undefined) options.seed = seed;
  const ignoreEos = optionalBoolean(body, 'ignore_eos');
  if (ignoreEos !== undefined) options.ignoreEos = ignoreEos;
  const stop = body.stop;
  if (stop !== undefined && stop !== null) {
    if (typeof stop === 'string') options.stop = stop;
    else if (Array.isArray(stop) && stop.every((s) => typeof s === 'string')) options.stop = stop as string[];
    else throw badRequest('stop must be a string or an array of strings', 'stop');
  }
  const stopIds = body.stop_token_ids;
  if (stopIds !== undefined && stopIds !== null) {
    if (!Array.isArray(stopIds) || stopIds.some((id) => !Number.isInteger(id))) throw badRequest('stop_token_ids must be an array of integers', 'stop_token_ids');
    options.stopTokenIds = stopIds as number[];
  }
  return options;
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
