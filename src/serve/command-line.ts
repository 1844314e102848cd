/**
 * `weft serve` flags. Names follow OpenVINO Model Server's where OVMS has the
 * option, so an OVMS command line works after changing the program name:
 * OVMS's underscores are accepted (`--max_num_seqs 16` = `--max-num-seqs 16`),
 * as are its names for the same thing (`--rest_port`, `--rest_bind_address`,
 * `--model_name`, `--model_path`, `--target_device`, `--cache_size`).
 */

import { parseArgs } from 'node:util';
import type { KvPrecision } from '../backends/backend.js';
import type { ParserOptions, PipelineOptions, SpeculativeOptions } from '../pipeline/options.js';
import { GUIDED_TOOL_PARSERS, toolParserNames } from '../tool-formats/registry.js';
import { reasoningParserNames } from '../parsers/index.js';

export interface ServeCommand {
  readonly help: boolean;
  readonly model: string;
  readonly modelName: string | undefined;
  readonly host: string;
  readonly port: number;
  readonly apiKey: string | undefined;
  readonly pipeline: Omit<PipelineOptions, 'model' | 'onProgress' | 'logger'>;
  /** Parsers the flags name ('none' turns one off); the rest are inferred from the model. */
  readonly parsers: ParserOptions;
  /** --enable-tool-guided-generation: chats with tools and tool_choice "auto" are tool-guided. */
  readonly guidedTools: boolean;
  readonly maxBodyBytes: number | undefined;
  readonly bodyTimeoutMs: number | undefined;
  readonly shutdownTimeoutMs: number;
  readonly quiet: boolean;
}

/** A mistake on the serve command line (exit code 2). */
export class ServeUsageError extends Error {
  override name = 'ServeUsageError';
}

/** OVMS's names for options weft spells otherwise. */
const OVMS_ALIASES: Record<string, string> = {
  'rest-port': 'port',
  'rest-bind-address': 'host',
  'model-path': 'model',
  'target-device': 'device',
  'cache-size': 'kv-cache-size',
};

/** Boolean flags that also take an explicit value, as OVMS writes them (`--enable_prefix_caching true`). */
const VALUED_BOOLEANS = ['enable-prefix-caching', 'enable-tool-guided-generation'];

export function parseServeArgs(argv: readonly string[]): ServeCommand {
  const { values, positionals } = parse(normalize(argv));
  if (positionals.length > 0) throw new ServeUsageError(`serve takes no arguments (got ${JSON.stringify(positionals[0])})`);
  const help = values.help === true;
  const model = values.model;
  if (!help && (model === undefined || model === '')) throw new ServeUsageError('--model <dir> is required');
  const pipeline: ServeCommand['pipeline'] = {
    ...(values.device !== undefined && { device: values.device }),
    ...(values.threads !== undefined && { threads: integer('--threads', values.threads, 1) }),
    kvCache: {
      ...(values['kv-cache-size'] !== undefined && { size: cacheSize(values['kv-cache-size']) }),
      ...(values['kv-cache-precision'] !== undefined && { precision: precision(values['kv-cache-precision']) }),
      ...(values['block-size'] !== undefined && { blockSize: integer('--block-size', values['block-size'], 1) }),
    },
    scheduler: {
      ...(values['max-num-seqs'] !== undefined && { maxNumSeqs: integer('--max-num-seqs', values['max-num-seqs'], 1) }),
      ...(values['max-num-batched-tokens'] !== undefined && {
        maxNumBatchedTokens: integer('--max-num-batched-tokens', values['max-num-batched-tokens'], 1),
      }),
      ...(values['enable-prefix-caching'] !== undefined && { prefixCaching: bool('--enable-prefix-caching', values['enable-prefix-caching']) }),
    },
    ...(values['speculative-config'] !== undefined && { speculative: speculativeConfig(values['speculative-config']) }),
  };
  return {
    help,
    model: model ?? '',
    modelName: values['model-name'],
    host: values.host ?? '127.0.0.1',
    port: values.port === undefined ? 8000 : integer('--port', values.port, 0, 65535),
    apiKey: values['api-key'],
    pipeline,
    parsers: {
      ...(values['tool-parser'] !== undefined && { tool: parserName('--tool-parser', values['tool-parser'], toolParserNames()) }),
      ...(values['reasoning-parser'] !== undefined && {
        reasoning: parserName('--reasoning-parser', values['reasoning-parser'], reasoningParserNames()),
      }),
    },
    guidedTools: values['enable-tool-guided-generation'] === undefined ? false : bool('--enable-tool-guided-generation', values['enable-tool-guided-generation']),
    maxBodyBytes: values['max-body-size'] === undefined ? undefined : integer('--max-body-size', values['max-body-size'], 1),
    bodyTimeoutMs: values['body-timeout'] === undefined ? undefined : integer('--body-timeout', values['body-timeout'], 1),
    shutdownTimeoutMs: 1000 * (values['shutdown-timeout'] === undefined ? 10 : number('--shutdown-timeout', values['shutdown-timeout'])),
    quiet: values.quiet === true,
  };
}

export const SERVE_HELP = `Usage: weft serve --model <dir> [options]

An OpenAI-compatible HTTP server over one model: POST /v1/chat/completions and
/v1/completions (streamed or not), GET /v1/models, /health and /metrics
(Prometheus). /v3/... works too, as in OpenVINO Model Server. A client that
disconnects or times out cancels only its own request. Ctrl-C or SIGTERM stops
it gracefully: running requests get --shutdown-timeout to finish.

Options (OVMS's spellings work too: --max_num_seqs, --rest_port, --cache_size, ...):
  -m, --model <path>              Hugging Face model folder, .gguf file or OpenVINO IR folder (required)
      --model-name <name>         the name clients send as "model" (default: the folder's name)
      --host <addr>               address to listen on (default 127.0.0.1; 0.0.0.0 = every interface)
      --port <n>                  TCP port (default 8000; 0 = any free port)
      --api-key <key>             require "Authorization: Bearer <key>" on /v1 (default: $WEFT_API_KEY, else none)
      --device <name>             cpu (default), auto, or openvino:CPU / openvino:GPU / openvino:AUTO for an IR folder
      --threads <n>               CPU threads (default: all available cores)
      --kv-cache-size <size>      KV cache budget, e.g. 512MB or 2GB; a bare number is GB, as OVMS's --cache_size
      --kv-cache-precision <p>    f32, f16 or u8 (default: the backend's, f16 on the CPU)
      --block-size <n>            tokens per KV cache block (default 16; OpenVINO: the compiled model's)
      --max-num-seqs <n>          most requests running at once (default 64)
      --max-num-batched-tokens <n> most tokens per engine step (default 2048)
      --enable-prefix-caching [true|false]  reuse cached prompt prefixes (default true)
      --speculative-config <json> speculative decoding by default, e.g. '{"method":"prompt-lookup","tokens":4,"ngram":2}'
                                  (vLLM's '{"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":2}' too);
                                  a request's "speculative" (false or such an object) overrides it
      --tool-parser <name>        ${toolParserNames().join(', ')}, none
                                  (default: inferred from the chat template's tool-call markup)
      --reasoning-parser <name>   ${reasoningParserNames().join(', ')}, none
                                  (default: qwen3 when the model has a <think> token or template)
      --enable-tool-guided-generation [true|false]  with tool_choice "auto", a call the model
                                  starts is guided: the parser's syntax, a declared tool, arguments
                                  valid against its schema (default false; needs a tool parser with
                                  a grammar: ${GUIDED_TOOL_PARSERS.join(', ')})
      --max-body-size <bytes>     largest request body (default 16777216)
      --body-timeout <ms>         most time to receive a request body (default 30000)
      --shutdown-timeout <s>      time running requests get at shutdown (default 10)
  -q, --quiet                     no loading progress
  -h, --help                      this help

Example (weft's demo model, then any OpenAI client at http://127.0.0.1:8000/v1):
  weft serve -m models/weft-demo --kv-cache-size 64MB --max-num-seqs 16
`;

/** `--max_num_seqs=16` -> `--max-num-seqs=16`; OVMS aliases; valued booleans given as `--flag=value`. */
function normalize(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) {
      out.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const rawName = (eq < 0 ? arg.slice(2) : arg.slice(2, eq)).replace(/_/g, '-');
    const name = OVMS_ALIASES[rawName] ?? rawName;
    const value = eq < 0 ? undefined : arg.slice(eq + 1);
    if (VALUED_BOOLEANS.includes(name)) {
      const next = argv[i + 1];
      if (value !== undefined) out.push(`--${name}=${value}`);
      else if (next === 'true' || next === 'false') out.push(`--${name}=${argv[++i]}`);
      else out.push(`--${name}=true`);
      continue;
    }
    out.push(value === undefined ? `--${name}` : `--${name}=${value}`);
  }
  return out;
}

/** serve's flags as node:util's parseArgs reads them (after normalize()). Exported for the test that keeps docs/serve.md and the help in step. */
export const SERVE_OPTIONS = {
  model: { type: 'string', short: 'm' },
  'model-name': { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  'api-key': { type: 'string' },
  device: { type: 'string' },
  threads: { type: 'string' },
  'kv-cache-size': { type: 'string' },
  'kv-cache-precision': { type: 'string' },
  'block-size': { type: 'string' },
  'max-num-seqs': { type: 'string' },
  'max-num-batched-tokens': { type: 'string' },
  'enable-prefix-caching': { type: 'string' },
  'speculative-config': { type: 'string' },
  'tool-parser': { type: 'string' },
  'reasoning-parser': { type: 'string' },
  'enable-tool-guided-generation': { type: 'string' },
  'max-body-size': { type: 'string' },
  'body-timeout': { type: 'string' },
  'shutdown-timeout': { type: 'string' },
  quiet: { type: 'boolean', short: 'q' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies NonNullable<NonNullable<Parameters<typeof parseArgs>[0]>['options']>;

function parse(args: string[]) {
  try {
    return parseArgs({
      args,
      strict: true,
      allowPositionals: true,
      options: SERVE_OPTIONS,
    });
  } catch (error) {
    throw new ServeUsageError((error as Error).message.split('. To specify')[0] ?? String(error));
  }
}

/**
 * --speculative-config: weft's `speculative` option as JSON, or vLLM's n-gram spelling of it
 * (`method: "ngram"`, `num_speculative_tokens`, `prompt_lookup_max`). Keys and ranges are
 * checked by the pipeline, which names the option.
 */
function speculativeConfig(text: string): SpeculativeOptions {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ServeUsageError(`--speculative-config must be JSON, e.g. '{"method":"prompt-lookup","tokens":4}' (got ${JSON.stringify(text)})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ServeUsageError(`--speculative-config must be a JSON object, e.g. '{"method":"prompt-lookup","tokens":4}' (got ${JSON.stringify(text)})`);
  }
  const config = value as Record<string, unknown>;
  if (config.method !== 'ngram') return config as unknown as SpeculativeOptions;
  const { method: _method, num_speculative_tokens: tokens, prompt_lookup_max: ngram, ...rest } = config;
  return { method: 'prompt-lookup', ...(tokens !== undefined && { tokens }), ...(ngram !== undefined && { ngram }), ...rest } as unknown as SpeculativeOptions;
}

function number(flag: string, text: string): number {
  const value = text.trim() === '' ? Number.NaN : Number(text);
  if (!Number.isFinite(value) || value < 0) throw new ServeUsageError(`${flag} must be a number >= 0, got ${JSON.stringify(text)}`);
  return value;
}

function integer(flag: string, text: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = text.trim() === '' ? Number.NaN : Number(text);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ServeUsageError(`${flag} must be an integer from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ' up'}, got ${JSON.stringify(text)}`);
  }
  return value;
}

/** A size with a unit, or a bare number of gigabytes (OVMS's --cache_size). */
function cacheSize(text: string): string {
  if (/^\s*\d+(\.\d+)?\s*$/.test(text)) return `${text.trim()}GB`;
  if (!/^\s*\d+(\.\d+)?\s*[a-z]+\s*$/i.test(text)) throw new ServeUsageError(`--kv-cache-size must be a size such as 512MB or 2GB, got ${JSON.stringify(text)}`);
  return text;
}

function precision(text: string): KvPrecision {
  if (text === 'f32' || text === 'f16' || text === 'u8') return text;
  throw new ServeUsageError(`--kv-cache-precision must be f32, f16 or u8, got ${JSON.stringify(text)}`);
}

function bool(flag: string, text: string): boolean {
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw new ServeUsageError(`${flag} takes true or false, got ${JSON.stringify(text)}`);
}

function parserName(flag: string, name: string, known: readonly string[]): string {
  if (name === 'none' || known.includes(name)) return name;
  throw new ServeUsageError(`${flag}: unknown parser ${JSON.stringify(name)} (known: ${known.join(', ')}, none)`);
}
