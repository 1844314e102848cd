// weft/remote: weft's pipeline API over an OpenAI-compatible server (docs/scaling.md).
export { RemotePipeline } from './remote-pipeline.js';
export type { RemoteOptions } from './remote-pipeline.js';
