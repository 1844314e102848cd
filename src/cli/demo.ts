import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AbortError } from '../errors.js';
import { demoModelPath } from '../package-files.js';
import { Pipeline } from '../create.js';
import type { StreamPart } from '../pipeline/stream-parts.js';
import type { ChatMessage, ToolCall, ToolDefinition } from '../text/types.js';
import { ansi, useColor, type CliIo } from './io.js';
import { EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK } from './usage-error.js';

export interface DemoOptions {
  /** A demo model folder; default: the repository's models/weft-demo. */
  model?: string;
  threads?: number;
  quiet?: boolean;
  io: CliIo;
}

/**
 * `weft demo`: weft's own tiny model answering several questions at once with
 * reasoning and tool calls. Resolves to the process exit code.
 */
export async function runDemo(options: DemoOptions): Promise<number> {
  const { io } = options;
  const model = options.model ?? findDemoModel();
  if (model === undefined || !existsSync(join(model, 'tools.json'))) {
    io.stderr.write(`weft demo: no demo model at ${model ?? 'models/weft-demo'} (it needs config.json, model.safetensors, tokenizer files and tools.json)\n`);
    return EXIT_FAILURE;
  }
  const tools = JSON.parse(readFileSync(join(model, 'tools.json'), 'utf8')) as ToolDefinition[];
  const started = performance.now();
  // The built-in model gets a small KV cache on purpose (68 blocks of 16 tokens, about 1.2
  // conversations' worth): six conversations share it, so the engine preempts and recomputes
  // some of them, and the answers still come out the same. Another model gets the default.
  const pipe = await Pipeline.create({
    model,
    ...(options.threads !== undefined && { threads: options.threads }),
    parsers: { tool: 'qwen3coder', reasoning: 'qwen3' },
    ...(options.model === undefined && { kvCache: { size: '4MiB' } }),
  });
  try {
    if (!options.quiet) io.stderr.write(`weft demo: loaded ${model} in ${((performance.now() - started) / 1000).toFixed(2)} s\n`);
    const out = new DemoWriter(io, options.quiet === true);
    let peakBlocks = 0;
    const onStep = (): void => {
      peakBlocks = Math.max(peakBlocks, pipe.stats().kv.pools[0]?.usedBlocks ?? 0);
    };
    pipe.on('step', onStep);
    const everyone = new AbortController();
    const stopListening = io.onInterrupt(() => everyone.abort());
    const t0 = performance.now();
    DEMO_QUESTIONS.forEach((q, i) => out.line(i, 'user', q));
    const outcomes = await Promise.all(
      DEMO_QUESTIONS.map((question, i) => converse(pipe, tools, question, i, out, everyone.signal, i === ABORTED_QUESTION)),
    );
    stopListening();
    pipe.off('step', onStep);
    const seconds = (performance.now() - t0) / 1000;
    const stats = pipe.stats();
    const pool = stats.kv.pools[0];
    const tokens = outcomes.reduce((sum, o) => sum + o.tokens, 0);
    const cached = outcomes.reduce((sum, o) => sum + o.cachedPromptTokens, 0);
    const aborted = outcomes.filter((o) => o.aborted).length;
    io.stderr.write(
      `weft demo: ${DEMO_QUESTIONS.length} conversations (${aborted} aborted), ${outcomes.reduce((s, o) => s + o.requests, 0)} requests, ` +
        `${tokens} tokens in ${seconds.toFixed(2)} s = ${(tokens / seconds).toFixed(1)} tokens/s, ` +
        `preemptions ${stats.preemptions}, KV peak ${peakBlocks}/${pool?.totalBlocks ?? 0} blocks of ${stats.kv.blockSize} tokens, ` +
        `prompt tokens from the prefix cache ${cached}\n`,
    );
    return everyone.signal.aborted ? EXIT_INTERRUPTED : EXIT_OK;
  } finally {
    await pipe.close();
  }
}

/** The questions `weft demo` asks, all at once; the one at ABORTED_QUESTION is cancelled midway. */
const DEMO_QUESTIONS = [
  "What's the weather in Paris in fahrenheit? Also, convert 12 km to miles.",
  'What is 37 times 12.5?',
  'Schedule team standup on March 3 for 30 minutes with Ana and Ben, and remind me.',
  'What is the capital of Japan?',
  'Give me the forecast for Tokyo for the next 3 days.',
  "Divide 144 by 12. And what's the weather in Cape Town?",
];
const ABORTED_QUESTION = 2;
const ABORT_AFTER_CHARS = 40;

interface Outcome {
  tokens: number;
  cachedPromptTokens: number;
  requests: number;
  aborted: boolean;
}

/** One conversation: generate, run the tools it asks for, feed the results back, until it answers. */
async function converse(
  pipe: Pipeline,
  tools: ToolDefinition[],
  question: string,
  index: number,
  out: DemoWriter,
  everyone: AbortSignal,
  abortMidway: boolean,
): Promise<Outcome> {
  const outcome: Outcome = { tokens: 0, cachedPromptTokens: 0, requests: 0, aborted: false };
  const messages: ChatMessage[] = [{ role: 'user', content: question }];
  const mine = new AbortController();
  const signal = AbortSignal.any([everyone, mine.signal]);
  let seen = 0;
  try {
    for (let round = 0; round < 4; round++) {
      let reasoning = '';
      let content = '';
      const calls: ToolCall[] = [];
      outcome.requests++;
      for await (const part of pipe.stream(messages, { tools, temperature: 0, maxTokens: 512, signal })) {
        out.part(index, part);
        if (part.type === 'reasoning-delta') reasoning += part.text;
        else if (part.type === 'text-delta') content += part.text;
        else if (part.type === 'tool-call') calls.push({ id: part.id, name: part.name, arguments: part.arguments });
        else if (part.type === 'finish') {
          outcome.tokens += part.usage.completionTokens;
          outcome.cachedPromptTokens += part.usage.cachedPromptTokens;
        }
        seen += part.type === 'reasoning-delta' || part.type === 'text-delta' ? part.text.length : 0;
        if (abortMidway && seen >= ABORT_AFTER_CHARS) mine.abort();
      }
      out.flush(index);
      messages.push({ role: 'assistant', content: content.trim(), reasoning: reasoning.trim(), toolCalls: calls });
      if (calls.length === 0) return outcome;
      for (const call of calls) {
        const result = JSON.stringify(runDemoTool(call.name, call.arguments));
        out.line(index, 'tool', `${call.name}(${JSON.stringify(call.arguments)}) = ${result}`);
        messages.push({ role: 'tool', content: result, toolCallId: call.id, name: call.name });
      }
    }
    return outcome;
  } catch (error) {
    if (!(error instanceof AbortError)) throw error;
    out.flush(index);
    out.line(index, 'note', everyone.aborted ? 'stopped (Ctrl-C)' : 'aborted midway on purpose: the other conversations carry on');
    outcome.aborted = true;
    return outcome;
  }
}

/**
 * Writes the interleaved conversations as lines prefixed with their number: each
 * conversation's text is held until a line is complete (or fills the terminal),
 * so concurrent streams never split each other's lines. Reasoning is dimmed.
 */
class DemoWriter {
  private readonly pending = new Map<number, { kind: 'reasoning' | 'text'; text: string }>();
  private readonly color: boolean;
  private readonly width: number;

  constructor(
    private readonly io: CliIo,
    private readonly quiet: boolean,
  ) {
    this.color = useColor(io.stdout, io.env);
    this.width = Math.max(40, (io.stdout.columns ?? 100) - 6);
  }

  part(index: number, part: StreamPart): void {
    if (part.type === 'reasoning-delta') this.append(index, 'reasoning', part.text);
    else if (part.type === 'text-delta') this.append(index, 'text', part.text);
    else if (part.type === 'tool-call') this.flush(index);
  }

  /** A whole line of another kind (the question, a tool result, a note). */
  line(index: number, kind: 'user' | 'tool' | 'note', text: string): void {
    this.flush(index);
    const label = { user: '? ', tool: '→ ', note: '✂ ' }[kind];
    this.write(index, kind === 'user' || kind === 'tool' ? this.bold(label + text) : label + text);
  }

  flush(index: number): void {
    const p = this.pending.get(index);
    if (p === undefined) return;
    this.pending.delete(index);
    this.emit(index, p.kind, p.text);
  }

  private append(index: number, kind: 'reasoning' | 'text', text: string): void {
    const p = this.pending.get(index);
    if (p !== undefined && p.kind !== kind) this.flush(index);
    const entry = this.pending.get(index) ?? { kind, text: '' };
    entry.text += text;
    this.pending.set(index, entry);
    // Complete lines go out now; a long line goes out once it fills the terminal.
    for (;;) {
      const newline = entry.text.indexOf('\n');
      if (newline >= 0 && newline <= this.width) {
        this.emit(index, kind, entry.text.slice(0, newline));
        entry.text = entry.text.slice(newline + 1);
        continue;
      }
      if (entry.text.length <= this.width) break;
      // Wrap at the last space that fits (or hard, for a very long word).
      const space = entry.text.lastIndexOf(' ', this.width);
      const end = space > 0 ? space : this.width;
      this.emit(index, kind, entry.text.slice(0, end));
      entry.text = entry.text.slice(space > 0 ? end + 1 : end);
    }
  }

  private emit(index: number, kind: 'reasoning' | 'text', text: string): void {
    if (text.trim() === '') return;
    if (kind === 'reasoning') {
      if (!this.quiet) this.write(index, this.color ? ansi.dim(text) : `(thinking) ${text}`);
    } else this.write(index, text);
  }

  private bold(text: string): string {
    return this.color ? ansi.bold(text) : text;
  }

  private write(index: number, text: string): void {
    this.io.stdout.write(`[${index + 1}] ${text}\n`);
  }
}

/** The package's demo model folder, or undefined when this installation has none. */
function findDemoModel(): string | undefined {
  try {
    return demoModelPath();
  } catch {
    return undefined;
  }
}

const FACTORS: Record<string, number> = {
  'kilometers>miles': 0.621371, 'miles>kilometers': 1.609344, 'meters>feet': 3.28084, 'feet>meters': 0.3048,
  'centimeters>inches': 0.393701, 'inches>centimeters': 2.54, 'kilograms>pounds': 2.20462,
  'pounds>kilograms': 0.453592, 'grams>ounces': 0.035274, 'ounces>grams': 28.3495,
  'liters>gallons': 0.264172, 'gallons>liters': 3.78541,
};
const CONDITIONS = ['sunny', 'cloudy', 'rainy', 'windy', 'snowy'];

/** At most two decimals, as the training data's tool results have them. */
const round2 = (x: number): number => Math.round(x * 100) / 100;

/**
 * The demo's tools, the same functions as tools/demo-model/tool_impl.py (which made the
 * training data), so the model sees results shaped like the ones it learnt from.
 */
export function runDemoTool(name: string, args: Record<string, unknown>): Record<string, unknown> {
  const num = (key: string): number => (typeof args[key] === 'number' ? (args[key] as number) : Number.NaN);
  const str = (key: string): string => String(args[key] ?? '');
  switch (name) {
    case 'calculator': {
      const [a, b] = [num('a'), num('b')];
      const op = str('operation');
      if (op === 'divide' && b === 0) return { error: 'division by zero' };
      const r = op === 'add' ? a + b : op === 'subtract' ? a - b : op === 'multiply' ? a * b : op === 'divide' ? a / b : Number.NaN;
      return Number.isFinite(r) ? { result: round2(r) } : { error: 'bad arguments' };
    }
    case 'convert_units': {
      const [v, from, to] = [num('value'), str('from_unit'), str('to_unit')];
      if (from === to) return { value: round2(v), unit: to };
      if (from === 'celsius' && to === 'fahrenheit') return { value: round2((v * 9) / 5 + 32), unit: to };
      if (from === 'fahrenheit' && to === 'celsius') return { value: round2(((v - 32) * 5) / 9), unit: to };
      const factor = FACTORS[`${from}>${to}`];
      return factor === undefined ? { error: `cannot convert ${from} to ${to}` } : { value: round2(v * factor), unit: to };
    }
    case 'get_weather': {
      const city = str('city');
      const h = [...city].reduce((sum, ch, i) => sum + (i + 1) * ch.charCodeAt(0), 0);
      const unit = args.unit === 'fahrenheit' ? 'fahrenheit' : 'celsius';
      const inUnit = (c: number): number => round2(unit === 'fahrenheit' ? (c * 9) / 5 + 32 : c);
      const temp = (h % 35) - 5;
      const condition = CONDITIONS[h % 5];
      if (typeof args.days === 'number') {
        return { city, days: args.days, condition, high: inUnit(temp + 2 + (args.days % 3)), low: inUnit(temp - 4), unit };
      }
      return { city, temperature: inUnit(temp), unit, condition };
    }
    case 'create_event':
      return { status: 'created', title: str('title'), date: str('date') };
    case 'send_email':
      return { status: 'sent', to: str('to') };
    default:
      return { error: `unknown tool ${name}` };
  }
}
