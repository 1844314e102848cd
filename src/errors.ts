/**
 * Public errors. Every error weft throws or rejects with is a WeftError whose
 * `code` is stable across versions, so callers can branch on it.
 */
export type WeftErrorCode =
  | 'INVALID_OPTION'
  | 'ABORTED'
  | 'PROMPT_TOO_LONG'
  | 'PIPELINE_CLOSED'
  | 'ENGINE_ERROR'
  | 'BACKEND_ERROR'
  | 'BACKEND_CRASHED'
  | 'NATIVE_BACKEND_UNAVAILABLE'
  | 'MODEL_LOAD_ERROR'
  | 'UNSUPPORTED_MODEL'
  | 'TOKENIZER_ERROR'
  | 'CHAT_TEMPLATE_ERROR'
  | 'REMOTE_ERROR'
  | 'GRAMMAR_DEAD_END';

export class WeftError extends Error {
  readonly code: WeftErrorCode;
  constructor(code: WeftErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** A request or pipeline option has a bad value. `option` names it (e.g. "kvCache.size"). */
export class InvalidOptionError extends WeftError {
  constructor(readonly option: string, message: string) {
    super('INVALID_OPTION', `${option}: ${message}`);
  }
}

/** The request was cancelled by its AbortSignal, by breaking out of a stream, or by abort(). */
export class AbortError extends WeftError {
  constructor(message = 'the request was aborted', options?: { cause?: unknown }) {
    super('ABORTED', message, options);
  }
}

/** The prompt (plus what must be generated) cannot fit the model context or an empty KV cache. */
export class PromptTooLongError extends WeftError {
  constructor(message: string) {
    super('PROMPT_TOO_LONG', message);
  }
}

/** The pipeline was closed before or while the request ran. */
export class PipelineClosedError extends WeftError {
  constructor(message = 'the pipeline is closed') {
    super('PIPELINE_CLOSED', message);
  }
}

/** An impossible engine state failed this request; other requests were not affected. */
export class EngineError extends WeftError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ENGINE_ERROR', message, options);
  }
}

/** The backend failed to execute a step. */
export class BackendError extends WeftError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('BACKEND_ERROR', message, options);
  }
}

/**
 * The process that ran the engine and its backend (`isolation: 'process'`)
 * died while the request ran. The pipeline starts a new one; later requests are served.
 */
export class BackendCrashedError extends WeftError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('BACKEND_CRASHED', message, options);
  }
}

/** The native addon could not be loaded; the message says how to rebuild it. */
export class NativeBackendUnavailableError extends WeftError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('NATIVE_BACKEND_UNAVAILABLE', message, options);
  }
}

/**
 * The OpenVINO backend (its own addon, built only when OpenVINO is found) is not
 * available; the message says how to get it (pip wheel or archive, then
 * `npm run build:openvino`). Same code as the CPU addon's, NATIVE_BACKEND_UNAVAILABLE.
 */
export class OpenVinoUnavailableError extends NativeBackendUnavailableError {}

/** A model file is missing, malformed or inconsistent. `file` (and `tensor`) say where. */
export class ModelLoadError extends WeftError {
  constructor(message: string, readonly file?: string, readonly tensor?: string, options?: { cause?: unknown }) {
    super('MODEL_LOAD_ERROR', message, options);
  }
}

/** The model's architecture (or a feature of it) is not supported. */
export class UnsupportedModelError extends WeftError {
  constructor(message: string) {
    super('UNSUPPORTED_MODEL', message);
  }
}

export class TokenizerError extends WeftError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('TOKENIZER_ERROR', message, options);
  }
}

export class ChatTemplateError extends WeftError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('CHAT_TEMPLATE_ERROR', message, options);
  }
}

/**
 * A remote OpenAI-compatible server (RemotePipeline) could not be reached or
 * refused the request for a reason that is not the request's options.
 * `status` is the HTTP status (undefined when no answer came).
 */
export class RemoteError extends WeftError {
  constructor(message: string, readonly status?: number, options?: { cause?: unknown }) {
    super('REMOTE_ERROR', message, options);
  }
}

/**
 * A guided request (responseFormat, toolChoice) reached a state where its grammar allows no token
 * the model can produce (or the model gave every allowed token zero probability). Only that request ends.
 */
export class GrammarDeadEndError extends WeftError {
  constructor(message: string) {
    super('GRAMMAR_DEAD_END', message);
  }
}
