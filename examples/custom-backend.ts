/**
 * Plug your own Backend into weft's engine. This toy "model" spells the
 * alphabet after whatever it is given; a real one would run a network over the
 * PagedAttention batch (see src/backends/backend.ts).
 *
 *   npx tsx examples/custom-backend.ts
 */
import { Pipeline, type Backend, type StepBatch, type StepResult, type Tokenizer } from 'weft';

const VOCAB = 258; // bytes, then BOS 256 and EOS 257

class AlphabetBackend implements Backend {
  readonly shape = { vocabSize: VOCAB, numLayers: 1, numKvHeads: 1, headDim: 1, maxContextLength: 4096 };
  allocateCache(): void {}
  async execute(batch: StepBatch): Promise<StepResult> {
    const logits = new Float32Array(batch.logitsIndices.length * VOCAB);
    batch.logitsIndices.forEach((tokenIndex, row) => {
      const last = batch.inputIds[tokenIndex]!;
      const next = last >= 97 && last < 122 ? last + 1 : last === 122 ? 257 : 97; // a..z, then EOS
      logits[row * VOCAB + next] = 1;
    });
    return { logits };
  }
  dispose(): void {}
}

const bytes: Tokenizer = {
  vocabSize: VOCAB,
  bosTokenId: 256,
  eosTokenIds: [257],
  encode: (text, options) => [...(options?.addSpecialTokens === false ? [] : [256]), ...Buffer.from(text)],
  decode: (ids) => Buffer.from(ids.filter((id) => id < 256)).toString('utf8'),
  tokenToId: () => undefined,
  idToToken: () => undefined,
};

await using pipe = await Pipeline.create({ backend: new AlphabetBackend(), tokenizer: bytes });
const results = await Promise.all(['x', 'm', 'q'].map((prompt) => pipe.generate(prompt, { temperature: 0 })));
for (const result of results) console.log(result.text, result.finishReason);
