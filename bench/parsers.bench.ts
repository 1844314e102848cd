/**
 * Linear-time check for the streaming parsers: a ~100 KB and a ~1 MB model output are fed one
 * character per push() for several formats, and the time ratio is printed (≈10 means linear; a
 * parser that re-parsed the text on every delta would show ≈100).
 *
 *   npx tsx bench/parsers.bench.ts
 *
 * Time is the process's CPU time (process.cpuUsage, user + system), not wall time, so that other
 * processes on a shared machine do not skew the ratio; wall time is printed too. The two sizes are
 * timed alternately (small, large, small, ...) RUNS times each, after a warm-up,
 * and the medians compared, so that drift in machine load hits both alike. A workload's text cannot
 * always be cut to an exact size (JSON escaping grows it), so the ratio printed is normalised to
 * exactly 10x the characters: (ms1MB / chars1MB) / (ms100KB / chars100KB) * 10; the raw time ratio
 * is printed next to it. Every run must find the number of tool calls the text holds, else the
 * benchmark throws (a parser that silently dropped calls would look fast). The last line is one JSON
 * object: {"ratio1MBto100KB": <overall>, "formats": {...}}.
 */
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createParserChain, createReasoningParser, type ParserChain } from '../src/parsers/index.js';
import { createToolParser } from '../src/tool-formats/index.js';
import type { ToolDefinition } from '../src/text/types.js';

const tools: ToolDefinition[] = [
  {
    type: 'function',
    function: {
      name: 'write_file',
      parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' }, mode: { type: 'integer' } } },
    },
  },
];

const CODE_LINE = 'const s = "a<b>{c}[d]" + \'e\'; // ünï 🎉 <tool and [TOOL </para\n';

/** unit(0) + unit(1) + ... until `size` characters; `count` is how many units. */
function repeatTo(unit: (k: number) => string, size: number): { text: string; count: number } {
  const parts: string[] = [];
  let length = 0;
  for (let k = 0; length < size; k++) {
    const piece = unit(k);
    parts.push(piece);
    length += piece.length;
  }
  return { text: parts.join(''), count: parts.length };
}

interface Workload {
  name: string;
  parser: () => ParserChain;
  /** The model output of about `size` characters, and how many tool calls it holds. */
  build: (size: number) => { text: string; calls: number };
}

const workloads: Workload[] = [
  {
    name: 'qwen3+qwen3coder (one huge string parameter)',
    parser: () => createParserChain({ reasoning: createReasoningParser('qwen3'), tool: createToolParser('qwen3coder', { tools }) }),
    build: (size) => ({
      text:
        '<think>\nWrite the file.\n</think>\n\n<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/big.ts\n</parameter>\n<parameter=content>\n' +
        repeatTo(() => CODE_LINE, size).text +
        '</parameter>\n<parameter=mode>\n420\n</parameter>\n</function>\n</tool_call>',
      calls: 1,
    }),
  },
  {
    name: 'hermes (many calls with nested JSON)',
    parser: () => createParserChain({ tool: createToolParser('hermes', { tools }) }),
    build: (size) => {
      const { text, count } = repeatTo(
        (k) =>
          `Step ${k}.\n<tool_call>\n${JSON.stringify({ name: 'write_file', arguments: { path: `f${k}.ts`, content: CODE_LINE.repeat(8), mode: k, meta: { tags: ['a', 'b', { x: [1, 2.5, null, true] }] } } })}\n</tool_call>\n`,
        size,
      );
      return { text, calls: count };
    },
  },
  {
    name: 'mistral v11 (one huge JSON argument)',
    parser: () => createParserChain({ tool: createToolParser('mistral', { tools }) }),
    build: (size) => ({
      text: `[TOOL_CALLS]write_file[ARGS]${JSON.stringify({ path: 'big.txt', content: repeatTo(() => CODE_LINE, size).text })}`,
      calls: 1,
    }),
  },
  {
    name: 'llama3_json (many calls in prose, separated by ";")',
    parser: () => createParserChain({ tool: createToolParser('llama3_json', { tools }) }),
    build: (size) => {
      const { text, count } = repeatTo(
        (k) => `Step ${k} {see} it; ${JSON.stringify({ name: 'write_file', parameters: { path: `f${k}.ts`, content: CODE_LINE.repeat(4), mode: k } })}; `,
        size,
      );
      return { text, calls: count };
    },
  },
  {
    name: 'deepseek_r1 reasoning + deepseek_v3 (long reasoning, then calls)',
    parser: () => createParserChain({ reasoning: createReasoningParser('deepseek_r1'), tool: createToolParser('deepseek_v3', { tools }) }),
    build: (size) => ({
      text:
        repeatTo(() => 'Let me think about <think> tags and </thin partial ones.\n', size).text +
        '</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>write_file\n```json\n{"path": "a", "content": "b"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
      calls: 1,
    }),
  },
  {
    name: 'pythonic (many calls)',
    parser: () => createParserChain({ tool: createToolParser('pythonic', { tools }) }),
    build: (size) => {
      const { text, count } = repeatTo((k) => `write_file(path="f${k}.py", content='''${CODE_LINE.replaceAll("'", '"')}''', mode=${k}), `, size);
      return { text: `[${text}write_file(path="end")]`, calls: count + 1 };
    },
  },
];

/** Feeds the text one character per push; returns the CPU and wall milliseconds it took. */
function timeOneCharDeltas(parser: ParserChain, text: string): { ms: number; wallMs: number; calls: number } {
  const stream = parser.stream();
  let calls = 0;
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  for (let k = 0; k < text.length; k++) {
    for (const event of stream.push(text[k]!)) if (event.type === 'tool-call-end') calls++;
  }
  for (const event of stream.end()) if (event.type === 'tool-call-end') calls++;
  const cpu = process.cpuUsage(cpuStart);
  return { ms: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - start, calls };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const SMALL = 100 * 1024;
const LARGE = 1024 * 1024;
const results: Record<string, { ms100KB: number; ms1MB: number; ratio: number }> = {};
let totalSmall = 0;
let totalLarge = 0;

const RUNS = 7; // per size, alternating; both sizes report the median of as many runs

interface Timed {
  ms: number;
  wallMs: number;
  chars: number;
  calls: number;
}

/** One timed parse; throws if it finds the wrong number of calls. */
function timedRun(workload: Workload, input: { text: string; calls: number }): { ms: number; wallMs: number } {
  const run = timeOneCharDeltas(workload.parser(), input.text);
  if (run.calls !== input.calls) {
    throw new Error(`${workload.name}: expected ${input.calls} tool calls in ${input.text.length} chars, the parser found ${run.calls}`);
  }
  return run;
}

/** Medians of RUNS alternating parses of the small and the large text. */
function timeBoth(workload: Workload): { small: Timed; large: Timed } {
  const small = workload.build(SMALL);
  const large = workload.build(LARGE);
  const smallRuns: { ms: number; wallMs: number }[] = [];
  const largeRuns: { ms: number; wallMs: number }[] = [];
  for (let k = 0; k < RUNS; k++) {
    smallRuns.push(timedRun(workload, small));
    largeRuns.push(timedRun(workload, large));
  }
  const summary = (runs: { ms: number; wallMs: number }[], input: { text: string; calls: number }): Timed => ({
    ms: median(runs.map((r) => r.ms)),
    wallMs: median(runs.map((r) => r.wallMs)),
    chars: input.text.length,
    calls: input.calls,
  });
  return { small: summary(smallRuns, small), large: summary(largeRuns, large) };
}

console.log(`CPU: ${cpus()[0]?.model ?? 'unknown'} (${cpus().length} logical), Node ${process.version}; times are CPU time, medians of ${RUNS}`);

// Warm-up: let the JIT compile every parser before anything is timed.
for (const workload of workloads) for (let k = 0; k < 3; k++) timeOneCharDeltas(workload.parser(), workload.build(SMALL).text);

for (const workload of workloads) {
  const { small, large } = timeBoth(workload);
  const rawRatio = large.ms / small.ms;
  const ratio = (large.ms / large.chars / (small.ms / small.chars)) * 10;
  totalSmall += (small.ms / small.chars) * SMALL;
  totalLarge += (large.ms / large.chars) * LARGE;
  results[workload.name] = { ms100KB: round(small.ms), ms1MB: round(large.ms), ratio: round(ratio) };
  console.log(
    `${workload.name}: ${(small.chars / 1024).toFixed(0)} KB ${small.ms.toFixed(1)} ms (${small.calls} calls), ` +
      `${(large.chars / 1024).toFixed(0)} KB ${large.ms.toFixed(1)} ms (${large.calls} calls), ratio ${ratio.toFixed(2)} ` +
      `(raw ${rawRatio.toFixed(2)}; wall ${small.wallMs.toFixed(1)} / ${large.wallMs.toFixed(1)} ms), ` +
      `${((large.chars / large.ms) * 1000 / 1e6).toFixed(2)} M chars/s`,
  );
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

console.log(JSON.stringify({ ratio1MBto100KB: round(totalLarge / totalSmall), formats: results }));
