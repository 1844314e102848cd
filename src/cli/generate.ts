import type { Command } from './args.js';
import type { CliIo } from './io.js';
import { openModel } from './open-model.js';
import type { CliRequestOptions, OpenPipeline } from './pipeline-port.js';
import { PartWriter } from './render-parts.js';
import { RequestTimer } from './stats.js';
import { EXIT_INTERRUPTED, EXIT_OK, UsageError } from './usage-error.js';

type GenerateCommand = Extract<Command, { name: 'generate' }>;

/** `weft generate`: one prompt, streamed to stdout; tokens/s on stderr. Ctrl-C stops it cleanly. */
export async function runGenerate(command: GenerateCommand, io: CliIo, openPipeline: OpenPipeline): Promise<number> {
  const prompt = command.prompt ?? (await readPromptFromStdin(io));
  const pipeline = await openModel(command, io, openPipeline);
  if (!command.quiet && pipeline.chatTemplate !== undefined) {
    // A chat model continues a bare prompt poorly (it expects its template's turns).
    io.stderr.write(`weft: ${command.model} is a chat model (it has a chat template): \`weft chat -m ${command.model}\` talks to it through that template\n`);
  }
  const abort = new AbortController();
  const stopListening = io.onInterrupt(() => abort.abort());
  // The reader went away (`| head -c 10`): stop generating and end quietly, as `cat` would.
  let outputClosed = false;
  const stopWatchingOutput = io.onOutputClosed?.(() => {
    outputClosed = true;
    abort.abort();
  });
  try {
    if (command.echo) io.stdout.write(prompt);
    const writer = new PartWriter(io);
    const timer = new RequestTimer();
    let finish: { finishReason: string; completionTokens: number } | undefined;
    try {
      for await (const part of pipeline.stream(prompt, { ...requestOptions(command), signal: abort.signal })) {
        if (part.type === 'finish') {
          finish = { finishReason: part.finishReason, completionTokens: part.usage.completionTokens };
        } else {
          timer.markOutput();
          writer.write(part);
        }
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error;
      // Interrupted: the pipeline rejected with its AbortError; report what we have.
    }
    if (outputClosed) return EXIT_OK;
    writer.end();
    // Aborts and failures reject (caught above or by the caller), so a finish here is a normal end.
    if (!command.quiet && finish) io.stderr.write(`weft: ${timer.summary(finish.completionTokens, finish.finishReason)}\n`);
    if (abort.signal.aborted) {
      io.stderr.write('weft: interrupted\n');
      return EXIT_INTERRUPTED;
    }
    return EXIT_OK;
  } finally {
    stopListening();
    stopWatchingOutput?.();
    await pipeline.close();
  }
}

export function requestOptions(flags: {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  seed?: number;
}): CliRequestOptions {
  const options: CliRequestOptions = {};
  if (flags.maxTokens !== undefined) options.maxTokens = flags.maxTokens;
  if (flags.temperature !== undefined) options.temperature = flags.temperature;
  if (flags.topP !== undefined) options.topP = flags.topP;
  if (flags.topK !== undefined) options.topK = flags.topK;
  if (flags.seed !== undefined) options.seed = flags.seed;
  return options;
}

async function readPromptFromStdin(io: CliIo): Promise<string> {
  if (io.stdin.isTTY) {
    throw new UsageError('no prompt given: pass it after the options, or pipe it to stdin', 'generate');
  }
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  // A trailing newline from `echo` or a file is not part of the prompt.
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}
