import type { Command } from './args.js';
import { readTexts } from './embed.js';
import type { CliIo } from './io.js';
import { openModel } from './open-model.js';
import type { OpenPipeline } from './pipeline-port.js';
import { EXIT_INTERRUPTED, EXIT_OK, UsageError } from './usage-error.js';

type RerankCommand = Extract<Command, { name: 'rerank' }>;

/**
 * `weft rerank`: a query and documents in (arguments, --file or stdin, one per
 * line), one JSON line per document out, best first,
 * `{"index":i,"score":s,"document":"..."}` (the first --top-n); the token
 * count on stderr. Ctrl-C stops it.
 */
export async function runRerank(command: RerankCommand, io: CliIo, openPipeline: OpenPipeline): Promise<number> {
  const documents = await readTexts(command, io, 'rerank');
  if (documents.length === 0) throw new UsageError('no documents given: pass them as arguments, with --file, or one per line on stdin', 'rerank');
  const pipeline = await openModel(command, io, openPipeline);
  const abort = new AbortController();
  const stopListening = io.onInterrupt(() => abort.abort());
  try {
    if (pipeline.rerank === undefined) throw new UsageError('this pipeline cannot rerank', 'rerank');
    const started = performance.now();
    let result;
    try {
      result = await pipeline.rerank(command.query, documents, {
        signal: abort.signal,
        truncate: command.truncate,
        ...(command.topN !== undefined && { topN: command.topN }),
        ...(command.instruction !== undefined && { instruction: command.instruction }),
      });
    } catch (error) {
      if (!abort.signal.aborted) throw error;
      io.stderr.write('weft: interrupted\n');
      return EXIT_INTERRUPTED;
    }
    for (const { index, score } of result.ranking) io.stdout.write(`${JSON.stringify({ index, score, document: documents[index] })}\n`);
    if (!command.quiet) {
      const seconds = (performance.now() - started) / 1000;
      io.stderr.write(`weft: ${documents.length} documents, ${result.usage.promptTokens} tokens in ${seconds.toFixed(2)} s\n`);
    }
    return EXIT_OK;
  } finally {
    stopListening();
    await pipeline.close();
  }
}
