// weft/serve: the OpenAI-compatible HTTP server around a pipeline (docs/serve.md).
export { WeftServer } from './server.js';
export type { ServerOptions } from './server.js';
