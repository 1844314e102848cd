/**
 * bench:embed: weft's embedding throughput against the libraries Node apps embed with, each
 * engine in its own process (side.ts), alternating, medians over the rounds; then the cost of
 * embedding on a pipeline that is also generating.
 *
 *   npm run bench:embed [-- --rounds 2 --threads 2 --parts encoders,gguf,sharing --quick]
 *
 * encoders  BERT encoders (all-MiniLM-L6 and bge-base shapes, random weights, made by
 *           tools/embeddings/make_bench_encoders.py) against transformers.js 4.3.2
 *           (onnxruntime-node, CPU) on the same weights exported to ONNX: texts/s at batch 1, 32
 *           and 256 for 16- and 256-token texts, peak RSS. Goal >= 1.5x at batch 32, >= 1x at 1.
 * gguf      the BERT shapes as bert GGUF files (test/support/bert-to-gguf.ts) and a
 *           Qwen3-Embedding-0.6B-shape GGUF (random weights, `qwen3.pooling_type` last), Q8_0 and
 *           F16, against node-llama-cpp 3.21.1's embedding context: goal >= 1.2x.
 * sharing   decode tokens/s of 8 weft-demo chats alone, and while the same pipeline embeds
 *           1,000 texts.
 * The last line is one JSON object with every ratio.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { FULL, QUICK, makeModel, type BenchShape, type WeightType } from '../vs-llama-cpp/make-model.js';
import { convertBertToGguf } from '../../test/support/bert-to-gguf.js';
import { meta } from '../../test/support/gguf-writer.js';
import type { Cell, SideResult } from './side.js';
import { measureSharing } from './sharing.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' }, threads: { type: 'string', default: '2' },
    parts: { type: 'string', default: 'encoders,gguf,sharing' }, quick: { type: 'boolean' },
  },
});
const rounds = Number(values.rounds);
const threads = values.threads!;
const parts = new Set(values.parts!.split(','));
const work = mkdtempSync(join(tmpdir(), 'weft-bench-embed-'));
const summary: Record<string, number> = {};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

function runSide(engine: string, model: string, cells: Cell[]): SideResult | undefined {
  const cellsFile = join(work, 'cells.json');
  writeFileSync(cellsFile, JSON.stringify(cells));
  try {
    const out = execFileSync('npx', ['tsx', join(here, 'side.ts'), '--engine', engine, '--model', model, '--threads', threads, '--cells', cellsFile],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 26 });
    return JSON.parse(out.trim().split('\n').at(-1)!) as SideResult;
  } catch (error) {
    process.stderr.write(`bench: ${engine} failed on ${model}: ${(error as Error).message.split('\n')[0]}\n`);
    return undefined;
  }
}

/** Runs each engine `rounds` times, alternating, and prints one table of texts/s with ratios to the peer. */
function compare(title: string, engines: [string, string], model: [string, string], cells: Cell[], goalKey: (cell: Cell) => string | undefined): void {
  const results: Record<string, SideResult[]> = { [engines[0]]: [], [engines[1]]: [] };
  for (let r = 0; r < rounds; r++)
    for (const [i, engine] of engines.entries()) {
      const result = runSide(engine, model[i]!, cells);
      if (result) results[engine]!.push(result);
    }
  console.log(`\n**${title}** (${rounds} rounds, alternating; medians)\n`);
  console.log(`| text tokens | batch | ${engines[0]} texts/s | ${engines[1]} texts/s | ratio |`);
  console.log('| --- | --- | --- | --- | --- |');
  for (const [c, cell] of cells.entries()) {
    const [a, b] = engines.map((e) => (results[e]!.length ? median(results[e]!.map((r) => r.cells[c]!.textsPerSecond)) : NaN)) as [number, number];
    console.log(`| ${cell.tokens} | ${cell.batch} | ${fmt(a)} | ${fmt(b)} | ${(a / b).toFixed(2)}x |`);
    const key = goalKey(cell);
    if (key) summary[key] = Number((a / b).toFixed(3));
  }
  const rss = engines.map((e) => (results[e]!.length ? median(results[e]!.map((r) => r.peakRssMiB)) : NaN));
  console.log(`\npeak RSS: ${engines[0]} ${fmt(rss[0]!)} MiB, ${engines[1]} ${fmt(rss[1]!)} MiB`);
}

function encoderCells(folder: string, quick: boolean): Cell[] {
  const texts = JSON.parse(readFileSync(join(folder, 'texts.json'), 'utf8')) as Record<string, string[]>;
  const cells: Cell[] = [];
  for (const tokens of [16, 256])
    for (const batch of quick ? [1, 32] : [1, 32, 256]) {
      // Batch 1 embeds 8 texts one call each; a batch of 256 long texts is 65,536 tokens, run once.
      const count = batch === 1 ? 8 : batch;
      cells.push({ tokens, batch, inputs: texts[String(tokens)]!.slice(0, count) });
    }
  return cells;
}

/** Token-id inputs of regular vocabulary tokens, seeded, so both engines read exactly the same tokens. */
function idCells(vocabTokens: number, quick: boolean): Cell[] {
  let seed = 12345;
  const next = () => ((seed = (seed * 1103515245 + 12345) >>> 0) % vocabTokens);
  const inputs = (count: number, tokens: number) => Array.from({ length: count }, () => Array.from({ length: tokens }, next));
  return [
    { tokens: 16, batch: 1, inputs: inputs(8, 16) },
    { tokens: 16, batch: 32, inputs: inputs(32, 16) },
    { tokens: 256, batch: 1, inputs: inputs(quick ? 2 : 4, 256) },
    { tokens: 256, batch: 32, inputs: inputs(quick ? 8 : 32, 256) },
  ];
}

const cpu = cpus()[0]?.model ?? 'unknown CPU';
const flags = readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m)?.[1] ?? '';
console.log(`bench:embed on ${cpu} (${flags.includes('avx512f') ? 'AVX-512' : flags.includes('avx2') ? 'AVX2' : 'no AVX2'}), ${threads} threads, load average ${loadavg()[0]!.toFixed(1)} at the start`);

if (parts.has('encoders')) {
  for (const shape of values.quick ? ['minilm-l6-shape'] : ['minilm-l6-shape', 'bge-base-shape']) {
    const folder = join(here, '.models', shape);
    if (!existsSync(join(folder, 'onnx', 'model.onnx'))) {
      console.log(`\n${shape}: not built; make it with \`nice python3 tools/embeddings/make_bench_encoders.py\` (PyTorch, transformers, onnx, onnxscript)`);
      continue;
    }
    const key = shape.replace(/-shape$/, '').replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
    compare(`${shape} (BERT, float32, mean pooling, normalised): weft vs transformers.js 4.3.2`, ['weft', 'transformers.js'], [folder, folder],
      encoderCells(folder, values.quick === true), (c) => (c.tokens === 256 && (c.batch === 32 || c.batch === 1) ? `${key}OverTransformersJs${c.batch}` : undefined));
  }
}

if (parts.has('gguf')) {
  // The BERT shapes as llama.cpp's converter would write them (test/support/bert-to-gguf.ts), from the same folders.
  for (const shape of values.quick ? ['minilm-l6-shape'] : ['minilm-l6-shape', 'bge-base-shape']) {
    const folder = join(here, '.models', shape);
    if (!existsSync(join(folder, 'model.safetensors'))) continue; // said above, under encoders
    for (const type of ['Q8_0', 'F16'] as const) {
      const file = join(here, '.models', `${shape}-${type}.gguf`);
      if (!existsSync(file)) await convertBertToGguf(folder, file, type);
      const key = shape.replace(/-shape$/, '').replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
      compare(`${shape} GGUF ${type} (BERT, mean pooling): weft vs node-llama-cpp 3.21.1`, ['weft', 'node-llama-cpp'], [file, file],
        encoderCells(folder, true), (c) => (c.tokens === 256 && c.batch === 32 ? `${key}${type.replace('_', '')}OverNodeLlamaCpp` : undefined));
    }
  }
  const shape: BenchShape = values.quick ? QUICK : FULL;
  for (const type of ['Q8_0', 'F16'] as WeightType[]) {
    const file = join(here, '.models', `${shape.name}-embed-${type}.gguf`);
    if (!existsSync(file)) {
      process.stderr.write(`bench: writing ${file} ...\n`);
      await makeModel(shape, type, file, false, [['qwen3.pooling_type', meta.u32(3)]]);
    }
    compare(`${shape.name} GGUF ${type} (Qwen3-Embedding shape, last-token pooling): weft vs node-llama-cpp 3.21.1`, ['weft', 'node-llama-cpp'], [file, file],
      idCells(shape.merges, values.quick === true), (c) => (c.tokens === 256 && c.batch === 32 ? `gguf${type.replace('_', '')}OverNodeLlamaCpp` : undefined));
  }
}

if (parts.has('sharing')) {
  const result = await measureSharing(join(repo, 'models', 'weft-demo'), Number(threads), values.quick ? 200 : 1000);
  console.log(`\n**Sharing one pipeline** (models/weft-demo, 8 chats of ${result.chatTokens} tokens each):\n`);
  console.log('| | decode tok/s of the 8 chats | embeddings/s |');
  console.log('| --- | --- | --- |');
  console.log(`| chats alone | ${fmt(result.alone)} | |`);
  console.log(`| chats while embedding ${result.texts} texts | ${fmt(result.shared)} | ${fmt(result.embeddingsPerSecond)} |`);
  console.log(`\nchats' decode while embedding / alone: ${(result.shared / result.alone).toFixed(2)}x`);
  summary.sharedDecodeOverAlone = Number((result.shared / result.alone).toFixed(3));
}

rmSync(work, { recursive: true, force: true });
console.log(JSON.stringify(summary));
