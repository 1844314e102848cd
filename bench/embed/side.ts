/**
 * One engine of bench/embed in its own process (so peak RSS is its own):
 *   tsx side.ts --engine weft|transformers.js|node-llama-cpp --model PATH --threads N --cells JSON
 * A cell is { tokens, batch, inputs }: `inputs` texts (or token-id lists) of
 * `tokens` tokens each, embedded `batch` at a time (one embed call per batch;
 * node-llama-cpp's embedding context takes one input per call, so its batch is
 * a loop). Each cell is run once to warm up, then timed until 3 runs or 20 s.
 * Prints progress on stderr and one JSON line on stdout.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export interface Cell { readonly tokens: number; readonly batch: number; readonly inputs: ReadonlyArray<string | readonly number[]> }
export interface CellResult { readonly tokens: number; readonly batch: number; readonly textsPerSecond: number; readonly dimensions: number }
export interface SideResult { readonly engine: string; readonly cells: CellResult[]; readonly peakRssMiB: number; readonly loadSeconds: number }

type EmbedBatch = (inputs: ReadonlyArray<string | readonly number[]>) => Promise<ArrayLike<number>[]>;
const here = dirname(fileURLToPath(import.meta.url));

async function weft(model: string, threads: number): Promise<EmbedBatch> {
  const { Pipeline } = await import('../../src/index.js');
  // Prefix caching off: each timed run repeats its texts, and a decoder's last-token pooling would read
  // all but their last token from the cache; the peers compute every text every time.
  const pipe = await Pipeline.create({ model, threads, scheduler: { prefixCaching: false } });
  return async (inputs) => (await pipe.embed(inputs as string[] | number[][])).embeddings;
}

async function transformersJs(model: string, threads: number): Promise<EmbedBatch> {
  const tjs = (await import(join(here, 'node_modules', '@huggingface', 'transformers', 'dist', 'transformers.node.mjs'))) as {
    env: { allowRemoteModels: boolean; localModelPath: string };
    pipeline(task: string, model: string, options: object): Promise<(texts: string[], options: object) => Promise<{ dims: number[]; data: Float32Array }>>;
  };
  tjs.env.allowRemoteModels = false;
  tjs.env.localModelPath = dirname(model);
  const extractor = await tjs.pipeline('feature-extraction', model.slice(dirname(model).length + 1), {
    dtype: 'fp32', device: 'cpu', session_options: { intraOpNumThreads: threads, interOpNumThreads: 1 },
  });
  return async (inputs) => {
    const out = await extractor(inputs as string[], { pooling: 'mean', normalize: true });
    const [rows, width] = out.dims as [number, number];
    return Array.from({ length: rows }, (_, i) => out.data.subarray(i * width, (i + 1) * width));
  };
}

interface NlcEmbeddingContext { getEmbeddingFor(input: number[] | string): Promise<{ vector: readonly number[] }>; calculateInputLength(input: number[]): number }
async function nodeLlamaCpp(model: string, threads: number, longest: number): Promise<EmbedBatch> {
  const { getLlama } = (await import(join(here, 'node_modules', 'node-llama-cpp', 'dist', 'index.js'))) as {
    getLlama(options: object): Promise<{ loadModel(options: object): Promise<{ createEmbeddingContext(options: object): Promise<NlcEmbeddingContext> }> }>;
  };
  const llama = await getLlama({ build: 'never', gpu: false, maxThreads: threads, logLevel: 'error' });
  const loaded = await llama.loadModel({ modelPath: model });
  const context = await loaded.createEmbeddingContext({ contextSize: longest + 16, batchSize: 512, threads });
  return async (inputs) => {
    const out: ArrayLike<number>[] = [];
    for (const input of inputs) {
      if (typeof input === 'string') {
        out.push((await context.getEmbeddingFor(input)).vector); // a text: each engine tokenizes it itself
        continue;
      }
      // The ids already start and end as node-llama-cpp would make them, so both engines read the same tokens.
      if (context.calculateInputLength([...input]) !== input.length) throw new Error('node-llama-cpp would add tokens to this input');
      out.push((await context.getEmbeddingFor([...input])).vector);
    }
    return out;
  };
}

async function timeCell(embed: EmbedBatch, cell: Cell): Promise<CellResult> {
  const run = async () => {
    let dimensions = 0;
    const started = performance.now();
    for (let i = 0; i < cell.inputs.length; i += cell.batch) {
      const vectors = await embed(cell.inputs.slice(i, i + cell.batch));
      dimensions = vectors[0]!.length;
    }
    return { seconds: (performance.now() - started) / 1000, dimensions };
  };
  const { dimensions } = await run();
  const times: number[] = [];
  const started = performance.now();
  while (times.length < 3 && (times.length === 0 || performance.now() - started < 20_000)) times.push((await run()).seconds);
  times.sort((a, b) => a - b);
  return { tokens: cell.tokens, batch: cell.batch, textsPerSecond: cell.inputs.length / times[Math.floor(times.length / 2)]!, dimensions };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { engine: { type: 'string' }, model: { type: 'string' }, threads: { type: 'string', default: '2' }, cells: { type: 'string' } } });
  const cells = JSON.parse(readFileSync(values.cells!, 'utf8')) as Cell[];
  const threads = Number(values.threads);
  const log = (line: string) => process.stderr.write(`  [${values.engine}] ${line}\n`);
  const started = performance.now();
  const longest = Math.max(...cells.map((c) => c.tokens));
  const embed = values.engine === 'weft' ? await weft(values.model!, threads)
    : values.engine === 'transformers.js' ? await transformersJs(values.model!, threads)
    : values.engine === 'node-llama-cpp' ? await nodeLlamaCpp(values.model!, threads, longest)
    : (() => { throw new Error(`--engine must be weft, transformers.js or node-llama-cpp, not ${values.engine}`); })();
  const loadSeconds = (performance.now() - started) / 1000;
  const results: CellResult[] = [];
  for (const cell of cells) {
    results.push(await timeCell(embed, cell));
    log(`${cell.tokens} tokens, batch ${cell.batch}: ${results.at(-1)!.textsPerSecond.toFixed(1)} texts/s`);
  }
  const result: SideResult = { engine: values.engine!, cells: results, peakRssMiB: process.resourceUsage().maxRSS / 1024, loadSeconds };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}
