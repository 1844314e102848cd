/** GGUF model files: reader, config, load plan (the tokenizer a GGUF file embeds: src/text/gguf-tokenizer.ts). See docs/gguf.md. */
export { readGgufFile, GgufValueType, type GgufFile, type GgufTensor, type GgufValue, type GgufArray } from './reader.js';
export { ggufModelConfig, ggufArchitecture, GGUF_ARCHITECTURES } from './config.js';
export { openGgufModel, type GgufModel } from './open.js';
export { planGgufWeights, ggufTensorName, hfRowOrder } from './weights.js';
export { isGgufPath } from './path.js';
