/** Text-side interfaces shared by the pipeline, the engine's detokenizer and the parsers. */

export interface Tokenizer {
  /** Token ids of `text`. addSpecialTokens (default true) adds BOS/EOS as tokenizer_config says. */
  encode(text: string, options?: { addSpecialTokens?: boolean }): number[];
  /** Text of `ids`. skipSpecialTokens defaults to true. */
  decode(ids: readonly number[], options?: { skipSpecialTokens?: boolean }): string;
  readonly vocabSize: number;
  /**
   * Optional: characters of the longest token. With it, a pipeline refuses a
   * text far too long for the model's context before encoding it.
   */
  readonly longestTokenLength?: number;
  readonly bosTokenId: number | undefined;
  /** Every id that ends generation (tokenizer EOS plus generation_config eos_token_id). */
  readonly eosTokenIds: readonly number[];
  tokenToId(token: string): number | undefined;
  idToToken(id: number): string | undefined;
}

/** JSON schema of a tool's parameters (the subset parsers and templates look at). */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  required?: string[];
  enum?: unknown[];
  description?: string;
  [key: string]: unknown;
}

/** A tool the model may call, in the OpenAI/Hugging Face shape that chat templates expect. */
export interface ToolDefinition {
  type: 'function';
  function: { name: string; description?: string; parameters?: JsonSchema };
}

export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** Assistant reasoning from an earlier turn (templates may drop it). */
  reasoning?: string;
  /** Assistant tool calls from an earlier turn. */
  toolCalls?: ToolCall[];
  /** For role "tool": the call this result answers, and the tool's name. */
  toolCallId?: string;
  name?: string;
}

/** Defaults from generation_config.json. */
export interface GenerationDefaults {
  eosTokenIds?: number[];
  temperature?: number;
  topK?: number;
  topP?: number;
  minP?: number;
  repetitionPenalty?: number;
  doSample?: boolean;
  /** Cap on prompt + output tokens (max_length). */
  maxLength?: number;
  /** Default for a request's maxTokens (max_new_tokens). */
  maxNewTokens?: number;
}
