/** Errors across the process boundary: a WeftError becomes data in the child and the same typed error in the host. */

import * as errors from '../errors.js';
import type { ErrorData } from './protocol.js';

export function toErrorData(error: unknown): ErrorData {
  if (error instanceof errors.InvalidOptionError) {
    // Its message starts with "<option>: "; the host's constructor adds that back.
    return { code: error.code, message: error.message.slice(error.option.length + 2), option: error.option };
  }
  if (error instanceof errors.WeftError) return { code: error.code, message: error.message };
  return { code: undefined, message: error instanceof Error ? error.message : String(error) };
}

export function fromErrorData(data: ErrorData): errors.WeftError {
  switch (data.code) {
    case 'INVALID_OPTION':
      return new errors.InvalidOptionError(data.option ?? 'options', data.message);
    case 'ABORTED':
      return new errors.AbortError(data.message);
    case 'PROMPT_TOO_LONG':
      return new errors.PromptTooLongError(data.message);
    case 'PIPELINE_CLOSED':
      return new errors.PipelineClosedError(data.message);
    case 'BACKEND_ERROR':
      return new errors.BackendError(data.message);
    case 'BACKEND_CRASHED':
      return new errors.BackendCrashedError(data.message);
    case 'NATIVE_BACKEND_UNAVAILABLE':
      return new errors.NativeBackendUnavailableError(data.message);
    case 'MODEL_LOAD_ERROR':
      return new errors.ModelLoadError(data.message);
    case 'UNSUPPORTED_MODEL':
      return new errors.UnsupportedModelError(data.message);
    case 'TOKENIZER_ERROR':
      return new errors.TokenizerError(data.message);
    case 'CHAT_TEMPLATE_ERROR':
      return new errors.ChatTemplateError(data.message);
    default:
      return new errors.EngineError(`the isolated engine failed: ${data.message}`);
  }
}
