/**
 * `weft/ai-sdk`: weft as a Vercel AI SDK provider (LanguageModelV3, EmbeddingModelV3 and RerankingModelV3, for `ai` 6).
 *
 *   import { generateText } from 'ai';
 *   import { weft } from 'weft/ai-sdk';
 *   const { text } = await generateText({ model: weft(pipeline), prompt: 'Hi' });
 *
 * `@ai-sdk/provider` is an optional peer dependency: only its types are used.
 */
export { createWeft, weft, weftEmbedding, weftReranking } from './provider.js';
export type { WeftProvider, WeftProviderSettings } from './provider.js';
export { WeftLanguageModel } from './language-model.js';
export type { WeftModelSettings } from './language-model.js';
export { WeftEmbeddingModel } from './embedding-model.js';
export type { WeftEmbeddingSettings } from './embedding-model.js';
export { WeftRerankingModel } from './reranking-model.js';
export type { WeftRerankingSettings } from './reranking-model.js';
export type { WeftCallSettings } from './call-options.js';
export type { PipelineInput, PipelineSource } from '../integrations/pipeline-source.js';
export { toChatMessages, toolResultText } from './prompt.js';
export type { AiSdkMessage, ConvertedPrompt } from './prompt.js';
