/**
 * `weft/remote`: weft's pipeline API over an OpenAI-compatible server (docs/scaling.md).
 *
 *   import { RemotePipeline } from 'weft/remote';
 *   const pipe = await RemotePipeline.create({ remote: { baseURL: 'http://gpu-box:8000/v1', model: 'qwen3' } });
 *
 * `Pipeline.create({ remote })` from `weft` opens the same class.
 */
export { RemotePipeline } from './remote-pipeline.js';
export type { RemoteOptions } from './remote-pipeline.js';
