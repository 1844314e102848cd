// Public exports only. Everything a user may import from "weft" is listed here.
export { Pipeline } from './pipeline.js';
export type { ChatResult, GenerateResult, PipelineEvents, PipelineStats } from './pipeline.js';
export type {
  ChatOptions,
  GenerateOptions,
  KvCacheOptions,
  LoadProgress,
  ParserOptions,
  PipelineOptions,
  SchedulerOptions,
} from './options.js';
export type { StreamPart, TokenLogprobs, Usage } from './stream-parts.js';
export type { FinishReason } from './engine/request.js';
export type { StepInfo } from './engine/engine.js';
export type { PoolStats } from './engine/kv/kv-cache-manager.js';
export type { TokenLogprob } from './sampling/sampler.js';
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
export { ChatTemplate } from './text/chat-template.js';
export { HfTokenizer } from './text/hf-tokenizer.js';
export { loadText } from './text/load-text.js';
export { requireChatTemplate } from './text/chat-template.js';
export type { ChatTemplateRenderOptions } from './text/chat-template.js';
export type { TextAssets } from './text/load-text.js';
export * from './parsers/index.js';
export { CpuBackend } from './backends/cpu/cpu-backend.js';
export type { CpuBackendOptions } from './backends/cpu/cpu-backend.js';
export type { WeightQuantization } from './backends/cpu/quantization.js';
