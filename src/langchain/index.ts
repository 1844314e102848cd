/**
 * `weft/langchain`: weft as a LangChain.js chat model, embeddings and a reranker (`@langchain/core` 1.x).
 *
 *   import { ChatWeft } from 'weft/langchain';
 *   const model = new ChatWeft({ pipeline, temperature: 0 }).bindTools(tools);
 *   const reply = await model.invoke([new HumanMessage('What is 37 times 12.5?')]);
 *
 * `@langchain/core` is an optional peer dependency (this entry needs it at run time).
 */
export { ChatWeft } from './chat-model.js';
export type { ChatWeftCallOptions, ChatWeftFields, WeftRequestOptions } from './chat-model.js';
export { toChatMessages } from './messages.js';
export { WeftEmbeddings } from './embeddings.js';
export type { WeftEmbeddingsFields } from './embeddings.js';
export { WeftReranker } from './reranker.js';
export type { WeftRerankerFields } from './reranker.js';
