// Public exports only. Everything a user may import from "weft" is listed here.
// This module is the top of the library: nothing in src/ imports it. The
// adapters have entries of their own (weft/serve, weft/remote, weft/ai-sdk,
// weft/langchain); the server and the remote pipeline are also here, as they
// always were.
export { Pipeline } from './create.js';
export type { ModelPipeline, PipelineApi, PipelineEvents, PipelineStats } from './pipeline/face.js';
export type { IsolatedPipeline } from './isolation/host.js';
export type { ChatChoice, ChatResult, GenerateChoice, GenerateResult } from './pipeline/results.js';
export type { EmbedInput, EmbedOptions, EmbedResult } from './embeddings/embed.js';
export type { EmbeddingOptions } from './embeddings/embedding-config.js';
export type { RerankOptions, RerankResult } from './embeddings/rerank.js';
export type { RerankPipelineOptions } from './embeddings/rerank-config.js';
export type { Pooling } from './engine/embedding.js';
export type { ChatInputMessage, OpenAIChatMessage, OpenAIToolCall, TextContentPart } from './pipeline/messages.js';
export type {
  ChatOptions,
  GenerateOptions,
  KvCacheOptions,
  OpenVinoOptions,
  ParserOptions,
  PipelineOptions,
  SchedulerOptions,
  TextSandboxOptions,
} from './pipeline/options.js';
export type { ChoiceIndex, ChoicePart, FinishReason, StreamPart, TokenLogprobs, Usage } from './pipeline/stream-parts.js';
export type { StepInfo } from './engine/engine.js';
export type { SchedulingPolicy } from './engine/scheduler.js';
export type { PoolStats } from './engine/kv/kv-cache-manager.js';
export type { TokenLogprob } from './sampling/sampler.js';
export type { ResponseFormat, ToolChoice } from './guided/guide.js';
export * from './errors.js';
export { demoModelPath } from './package-files.js';
export type {
  Backend,
  BlockTables,
  CacheConfig,
  ExtraPoolSpec,
  KvPrecision,
  LoadProgress,
  ModelShape,
  SampledRows,
  SamplingRows,
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
export type { HfTokenizerSource } from './text/hf-tokenizer.js';
export { loadText } from './text/load-text.js';
export { requireChatTemplate } from './text/chat-template.js';
export type { ChatTemplateRenderOptions } from './text/chat-template.js';
export type { TextAssets } from './text/load-text.js';
export type { TextSource } from './text/sandbox/protocol.js';
export * from './parsers/index.js';
export * from './tool-formats/index.js';
export { CpuBackend } from './backends/cpu/cpu-backend.js';
export type { CpuBackendOptions } from './backends/cpu/cpu-backend.js';
export type { KernelSetName } from './backends/cpu/native-binding.js';
export type { ModelConfig, RopeScaling } from './model-files/config.js';
export type { WeightQuantization } from './backends/cpu/quantization.js';
export { OpenVinoBackend } from './backends/openvino/openvino-backend.js';
export type { OpenVinoBackendOptions, InferencePrecision } from './backends/openvino/openvino-backend.js';
export type { PortInfo } from './backends/openvino/step-inputs.js';
export { PipelineMetrics } from './metrics/pipeline-metrics.js';
export type { MetricsSnapshot, MetricsSource } from './metrics/pipeline-metrics.js';
export type { HistogramSnapshot } from './metrics/histogram.js';
export * from './serve/index.js';
export * from './remote/index.js';
