import { readFile } from 'node:fs/promises';
import type { Command } from './args.js';
import type { CliIo } from './io.js';
import { openModel } from './open-model.js';
import type { OpenPipeline } from './pipeline-port.js';
import { EXIT_INTERRUPTED, EXIT_OK, UsageError } from './usage-error.js';

type EmbedCommand = Extract<Command, { name: 'embed' }>;

/**
 * `weft embed`: texts in (arguments, --file or stdin, one per line), one JSON
 * line per text out, `{"index":i,"embedding":[...]}`, in input order; the
 * token count on stderr. Ctrl-C stops it.
 */
export async function runEmbed(command: EmbedCommand, io: CliIo, openPipeline: OpenPipeline): Promise<number> {
  const texts = await readTexts(command, io, 'embed');
  if (texts.length === 0) throw new UsageError('no texts given: pass them as arguments, with --file, or one per line on stdin', 'embed');
  const pipeline = await openModel(command, io, openPipeline);
  const abort = new AbortController();
  const stopListening = io.onInterrupt(() => abort.abort());
  try {
    if (pipeline.embed === undefined) throw new UsageError('this pipeline cannot embed', 'embed');
    const started = performance.now();
    let result;
    try {
      result = await pipeline.embed(texts, {
        signal: abort.signal,
        truncate: command.truncate,
        ...(command.promptName !== undefined && { promptName: command.promptName }),
        ...(command.dimensions !== undefined && { dimensions: command.dimensions }),
      });
    } catch (error) {
      if (!abort.signal.aborted) throw error;
      io.stderr.write('weft: interrupted\n');
      return EXIT_INTERRUPTED;
    }
    result.embeddings.forEach((vector, index) => io.stdout.write(`${JSON.stringify({ index, embedding: Array.from(vector) })}\n`));
    if (!command.quiet) {
      const seconds = (performance.now() - started) / 1000;
      io.stderr.write(`weft: ${texts.length} texts, ${result.usage.promptTokens} tokens, ${result.embeddings[0]!.length} dimensions in ${seconds.toFixed(2)} s\n`);
    }
    return EXIT_OK;
  } finally {
    stopListening();
    await pipeline.close();
  }
}

/** The texts to embed (or rerank): the arguments, else the lines of --file or of stdin (blank lines skipped). */
export async function readTexts(command: { readonly texts: string[]; readonly file?: string }, io: CliIo, topic: 'embed' | 'rerank'): Promise<string[]> {
  if (command.texts.length > 0) return command.texts;
  let content: string;
  if (command.file !== undefined) {
    content = await readFile(command.file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(`cannot read --file ${command.file}: ${error.code ?? error.message}`, topic);
    });
  } else {
    const what = topic === 'rerank' ? 'documents' : 'texts';
    if (io.stdin.isTTY) throw new UsageError(`no ${what} given: pass them as arguments, with --file, or pipe them to stdin (one per line)`, topic);
    const chunks: Buffer[] = [];
    for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
    content = Buffer.concat(chunks).toString('utf8');
  }
  return content.split(/\r?\n/).filter((line) => line.trim() !== '');
}
