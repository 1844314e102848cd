// Public exports only. Everything a user may import from "weft" is listed here.
export * from './errors.js';
export type { Result } from './engine/result.js';
export type {
  Backend,
  BlockTables,
  CacheConfig,
  ExtraPoolSpec,
  KvPrecision,
  ModelShape,
  StepBatch,
  StepResult,
} from './backends/backend.js';
export type {
  ChatMessage,
  GenerationDefaults,
  JsonSchema,
  Tokenizer,
  ToolCall,
  ToolDefinition,
} from './text/types.js';
