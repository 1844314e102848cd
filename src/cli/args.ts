import { parseArgs, type ParseArgsConfig } from 'node:util';
import { reasoningParserNames } from '../parsers/registry.js';
import { toolParserNames } from '../tool-formats/registry.js';
import { UsageError } from './usage-error.js';

/** Sampling and size flags shared by generate and chat. */
export interface SamplingFlags {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  seed?: number;
}

export interface LoadFlags {
  model: string;
  /** Pipeline device: 'cpu', 'auto', 'openvino:CPU' | 'openvino:GPU' | 'openvino:AUTO' (checked by the pipeline). */
  device?: string;
  threads?: number;
  kvCache?: string;
  quiet: boolean;
}

export type Command =
  | { name: 'help'; topic?: CommandName }
  | { name: 'version' }
  | ({ name: 'generate'; prompt?: string; echo: boolean } & LoadFlags & SamplingFlags)
  | ({ name: 'chat'; system?: string; templateKwargs?: Record<string, unknown> } & LoadFlags & SamplingFlags & ToolFlags)
  | { name: 'demo'; model?: string; threads?: number; quiet: boolean }
  | ({ name: 'embed'; texts: string[]; file?: string; promptName?: string; dimensions?: number; truncate: boolean } & LoadFlags)
  // The documents are `texts`, read as embed's are.
  | ({ name: 'rerank'; query: string; texts: string[]; file?: string; topN?: number; instruction?: string; truncate: boolean } & LoadFlags)
  // serve parses its own flags (src/serve/command-line.ts).
  | { name: 'serve'; args: string[] }
  // model: an OpenVINO IR folder whose cache layout to report (src/cli/doctor.ts).
  | { name: 'doctor'; json: boolean; model?: string };

export type CommandName = 'generate' | 'chat' | 'embed' | 'rerank' | 'demo' | 'serve' | 'doctor';
const COMMANDS: readonly CommandName[] = ['generate', 'chat', 'embed', 'rerank', 'demo', 'serve', 'doctor'];

/** Parsers and tools for chat. `reasoningParser: 'none'` turns off the automatic reasoning parser. */
export interface ToolFlags {
  reasoningParser?: string;
  toolParser?: string;
  /** A JSON file with an array of tool definitions (read by the chat command, not here). */
  toolsFile?: string;
  /** --guided-tools: calls the model makes are guided (tool-guided auto, docs/guided.md). */
  guidedTools?: boolean;
}

/** Turns the automatic reasoning parser off. */
import { NO_PARSER } from '../tool-formats/infer.js';

export { NO_PARSER };

type Options = NonNullable<ParseArgsConfig['options']>;

const loadOptions = {
  model: { type: 'string', short: 'm' },
  device: { type: 'string' },
  threads: { type: 'string' },
  'kv-cache': { type: 'string' },
  quiet: { type: 'boolean', short: 'q' },
  help: { type: 'boolean', short: 'h' },
} satisfies Options;

const samplingOptions = {
  'max-tokens': { type: 'string', short: 'n' },
  temperature: { type: 'string', short: 't' },
  'top-p': { type: 'string' },
  'top-k': { type: 'string' },
  seed: { type: 'string' },
} satisfies Options;

/** Each command's flags as node:util's parseArgs reads them (serve's are in src/serve/command-line.ts). Exported for the test that keeps docs/cli.md and the help in step. */
export const COMMAND_OPTIONS = {
  generate: { ...loadOptions, ...samplingOptions, echo: { type: 'boolean' } },
  chat: {
    ...loadOptions,
    ...samplingOptions,
    system: { type: 'string', short: 's' },
    'template-kwargs': { type: 'string' },
    'reasoning-parser': { type: 'string' },
    'tool-parser': { type: 'string' },
    tools: { type: 'string' },
    'guided-tools': { type: 'boolean' },
  },
  embed: { ...loadOptions, file: { type: 'string', short: 'f' }, 'prompt-name': { type: 'string' }, dimensions: { type: 'string' }, truncate: { type: 'boolean' } },
  rerank: { ...loadOptions, query: { type: 'string' }, file: { type: 'string', short: 'f' }, 'top-n': { type: 'string' }, instruction: { type: 'string' }, truncate: { type: 'boolean' } },
  demo: { model: loadOptions.model, threads: loadOptions.threads, quiet: loadOptions.quiet, help: loadOptions.help },
  doctor: { json: { type: 'boolean' }, model: loadOptions.model, help: loadOptions.help },
} satisfies Record<Exclude<CommandName, 'serve'>, Options>;

/** Turns argv (without node and the script) into a command, or throws UsageError. */
export function parseCommandLine(argv: readonly string[]): Command {
  const [first, ...rest] = argv;
  if (first === undefined) throw new UsageError('no command given');
  if (first === '--help' || first === '-h') return { name: 'help' };
  if (first === '--version' || first === '-v') return { name: 'version' };
  if (first === 'help') {
    const topic = rest[0];
    if (topic === undefined) return { name: 'help' };
    return { name: 'help', topic: commandName(topic) };
  }
  const name = commandName(first);
  if (name === 'generate') return parseGenerate(rest);
  if (name === 'chat') return parseChat(rest);
  if (name === 'embed') return parseEmbed(rest);
  if (name === 'rerank') return parseRerank(rest);
  if (name === 'serve') return { name: 'serve', args: rest };
  if (name === 'doctor') return parseDoctor(rest);
  return parseDemo(rest);
}

function commandName(word: string): CommandName {
  if ((COMMANDS as readonly string[]).includes(word)) return word as CommandName;
  if (word.startsWith('-')) throw new UsageError(`unknown option ${JSON.stringify(word)}: options go after the command`);
  throw new UsageError(`unknown command ${JSON.stringify(word)} (commands: ${COMMANDS.join(', ')})`);
}

function parseGenerate(args: string[]): Command {
  const { values, positionals } = parse('generate', args, COMMAND_OPTIONS.generate);
  if (values.help) return { name: 'help', topic: 'generate' };
  return {
    name: 'generate',
    ...loadFlags('generate', values),
    ...samplingFlags('generate', values),
    // Words after the flags form the prompt, so quoting is optional; none means stdin.
    prompt: positionals.length > 0 ? positionals.join(' ') : undefined,
    echo: values.echo === true,
  };
}

function parseEmbed(args: string[]): Command {
  const { values, positionals } = parse('embed', args, COMMAND_OPTIONS.embed);
  if (values.help) return { name: 'help', topic: 'embed' };
  const file = stringValue(values.file);
  if (file !== undefined && positionals.length > 0) throw new UsageError('give texts as arguments or --file, not both', 'embed');
  const promptName = stringValue(values['prompt-name']);
  const dimensions = optionalInteger('embed', '--dimensions', values.dimensions, 1);
  return {
    name: 'embed',
    ...loadFlags('embed', values),
    // Each argument is one text; none (and no --file) means one text per line of stdin.
    texts: positionals,
    ...(file !== undefined && { file }),
    ...(promptName !== undefined && { promptName }),
    ...(dimensions !== undefined && { dimensions }),
    truncate: values.truncate === true,
  };
}

function parseRerank(args: string[]): Command {
  const { values, positionals } = parse('rerank', args, COMMAND_OPTIONS.rerank);
  if (values.help) return { name: 'help', topic: 'rerank' };
  const query = stringValue(values.query);
  if (query === undefined || query.trim() === '') throw new UsageError('--query is required: the text the documents are ranked against', 'rerank');
  const file = stringValue(values.file);
  if (file !== undefined && positionals.length > 0) throw new UsageError('give documents as arguments or --file, not both', 'rerank');
  const topN = optionalInteger('rerank', '--top-n', values['top-n'], 1);
  const instruction = stringValue(values.instruction);
  return {
    name: 'rerank',
    ...loadFlags('rerank', values),
    query,
    // Each argument is one document; none (and no --file) means one document per line of stdin.
    texts: positionals,
    ...(file !== undefined && { file }),
    ...(topN !== undefined && { topN }),
    ...(instruction !== undefined && { instruction }),
    truncate: values.truncate === true,
  };
}

function parseChat(args: string[]): Command {
  const { values, positionals } = parse('chat', args, COMMAND_OPTIONS.chat);
  if (values.help) return { name: 'help', topic: 'chat' };
  if (positionals.length > 0) {
    throw new UsageError(`chat takes no prompt argument (got ${JSON.stringify(positionals[0])}); type messages at the > prompt`, 'chat');
  }
  const system = stringValue(values.system);
  const templateKwargs = jsonObject('chat', '--template-kwargs', values['template-kwargs']);
  return {
    name: 'chat',
    ...loadFlags('chat', values),
    ...samplingFlags('chat', values),
    ...(system !== undefined ? { system } : {}),
    ...(templateKwargs !== undefined ? { templateKwargs } : {}),
    ...toolFlags('chat', values),
  };
}

function toolFlags(command: CommandName, values: Values): ToolFlags {
  const flags: ToolFlags = {};
  const reasoning = parserName(command, '--reasoning-parser', values['reasoning-parser'], [...reasoningParserNames(), NO_PARSER]);
  if (reasoning !== undefined) flags.reasoningParser = reasoning;
  const tool = parserName(command, '--tool-parser', values['tool-parser'], toolParserNames());
  if (tool !== undefined) flags.toolParser = tool;
  const toolsFile = stringValue(values.tools);
  if (toolsFile !== undefined) {
    if (toolsFile.trim() === '') throw new UsageError('--tools needs a JSON file of tool definitions', command);
    flags.toolsFile = toolsFile;
  }
  if (values['guided-tools'] === true) {
    if (toolsFile === undefined) throw new UsageError('--guided-tools needs --tools (the tools a call may name)', command);
    flags.guidedTools = true;
  }
  return flags;
}

/** Checked here, before the model loads, so a typo costs no loading time. */
function parserName(command: CommandName, flag: string, value: Values[string], known: readonly string[]): string | undefined {
  const name = stringValue(value);
  if (name === undefined) return undefined;
  if (!known.includes(name)) throw new UsageError(`${flag}: unknown parser ${JSON.stringify(name)} (known: ${known.join(', ')})`, command);
  return name;
}

function parseDemo(args: string[]): Command {
  const { values, positionals } = parse('demo', args, COMMAND_OPTIONS.demo);
  if (values.help) return { name: 'help', topic: 'demo' };
  if (positionals.length > 0) throw new UsageError(`demo takes no arguments (got ${JSON.stringify(positionals[0])})`, 'demo');
  const model = stringValue(values.model);
  const threads = optionalInteger('demo', '--threads', values.threads, 1);
  return {
    name: 'demo',
    quiet: values.quiet === true,
    ...(model !== undefined ? { model } : {}),
    ...(threads !== undefined ? { threads } : {}),
  };
}

function parseDoctor(args: string[]): Command {
  const { values, positionals } = parse('doctor', args, COMMAND_OPTIONS.doctor);
  if (values.help) return { name: 'help', topic: 'doctor' };
  if (positionals.length > 0) throw new UsageError(`doctor takes no arguments (got ${JSON.stringify(positionals[0])})`, 'doctor');
  const model = stringValue(values.model);
  if (model === '') throw new UsageError('--model needs an OpenVINO IR folder', 'doctor');
  return { name: 'doctor', json: values.json === true, ...(model !== undefined ? { model } : {}) };
}

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

function parse(command: CommandName, args: string[], options: Options): { values: Values; positionals: string[] } {
  try {
    return parseArgs({ args: attachNegativeValues(args, options), options, strict: true, allowPositionals: true });
  } catch (error) {
    // node:util's messages are clear ("Unknown option '--foo'"); keep them, minus its long hints.
    const message = (error as Error).message.split('. To specify')[0] ?? String(error);
    throw new UsageError(message, command);
  }
}

/**
 * `--max-tokens -1` reaches node:util as an option followed by what looks like
 * another option, and it answers "argument is ambiguous". A negative number is
 * never an option here, so it is attached (`--max-tokens=-1`) and our own range
 * check reports it.
 */
function attachNegativeValues(args: readonly string[], options: Options): string[] {
  const longName = (arg: string): string | undefined => {
    if (arg.startsWith('--')) return arg.slice(2);
    if (/^-[a-z]$/i.test(arg)) return Object.keys(options).find((name) => options[name]?.short === arg.slice(1));
    return undefined;
  };
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') return [...out, ...args.slice(i)];
    const next = args[i + 1];
    const name = longName(arg);
    if (name !== undefined && options[name]?.type === 'string' && next !== undefined && /^-(\d|\.\d)/.test(next)) {
      out.push(`--${name}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

function loadFlags(command: CommandName, values: Values): LoadFlags {
  const model = stringValue(values.model);
  if (model === undefined || model === '') throw new UsageError('--model <dir> is required', command);
  const threads = optionalInteger(command, '--threads', values.threads, 1);
  const device = stringValue(values.device);
  if (device === '') throw new UsageError('--device needs a value: cpu, auto, openvino:CPU, openvino:GPU or openvino:AUTO', command);
  const kvCache = stringValue(values['kv-cache']);
  if (kvCache !== undefined && !/^\s*\d+(\.\d+)?\s*[a-z]*\s*$/i.test(kvCache)) {
    throw new UsageError(`--kv-cache must be a size such as 256MB or 1GB, got ${JSON.stringify(kvCache)}`, command);
  }
  return {
    model,
    quiet: values.quiet === true,
    ...(device !== undefined ? { device } : {}),
    ...(threads !== undefined ? { threads } : {}),
    ...(kvCache !== undefined ? { kvCache } : {}),
  };
}

function samplingFlags(command: CommandName, values: Values): SamplingFlags {
  const flags: SamplingFlags = {};
  const maxTokens = optionalInteger(command, '--max-tokens', values['max-tokens'], 1);
  if (maxTokens !== undefined) flags.maxTokens = maxTokens;
  const temperature = optionalNumber(command, '--temperature', values.temperature, (n) => n >= 0, 'a number >= 0');
  if (temperature !== undefined) flags.temperature = temperature;
  const topP = optionalNumber(command, '--top-p', values['top-p'], (n) => n > 0 && n <= 1, 'a number in (0, 1]');
  if (topP !== undefined) flags.topP = topP;
  const topK = optionalInteger(command, '--top-k', values['top-k'], 0);
  if (topK !== undefined) flags.topK = topK;
  const seed = optionalInteger(command, '--seed', values.seed, 0);
  if (seed !== undefined) flags.seed = seed;
  return flags;
}

function jsonObject(command: CommandName, flag: string, value: Values[string]): Record<string, unknown> | undefined {
  const text = stringValue(value);
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new UsageError(`${flag} must be a JSON object such as '{"enable_thinking":false}', got ${JSON.stringify(text)}`, command);
  }
  return parsed as Record<string, unknown>;
}

function stringValue(value: Values[string]): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function optionalNumber(
  command: CommandName,
  flag: string,
  value: Values[string],
  isValid: (n: number) => boolean,
  expected: string,
): number | undefined {
  const text = stringValue(value);
  if (text === undefined) return undefined;
  const number = text.trim() === '' ? Number.NaN : Number(text);
  if (!Number.isFinite(number) || !isValid(number)) {
    throw new UsageError(`${flag} must be ${expected}, got ${JSON.stringify(text)}`, command);
  }
  return number;
}

function optionalInteger(command: CommandName, flag: string, value: Values[string], min: number): number | undefined {
  return optionalNumber(command, flag, value, (n) => Number.isSafeInteger(n) && n >= min, `an integer >= ${min}`);
}
