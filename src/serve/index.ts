/**
 * `weft/serve`: the OpenAI-compatible HTTP server around a pipeline (docs/serve.md).
 *
 *   import { Pipeline } from 'weft';
 *   import { WeftServer } from 'weft/serve';
 *   const server = await WeftServer.start({ pipeline: await Pipeline.create({ model }), modelName: 'my-model' });
 */
export { WeftServer } from './server.js';
export type { ServerOptions } from './server.js';
