import { NO_PARSER, type LoadFlags } from './args.js';
import type { CliIo } from './io.js';
import type { CliPipeline, OpenPipeline } from './pipeline-port.js';
import { ProgressBar } from './progress-bar.js';

/** Opens the pipeline with a progress bar on stderr (unless --quiet) and says how long loading took. */
export async function openModel(flags: LoadFlags, io: CliIo, openPipeline: OpenPipeline): Promise<CliPipeline> {
  const bar = flags.quiet ? undefined : new ProgressBar(io.stderr);
  const started = performance.now();
  try {
    const pipeline = await openPipeline({
      model: flags.model,
      // Chat picks its parsers itself, each turn (chat.ts), and says why: the pipeline infers none of its own.
      parsers: { tool: NO_PARSER, reasoning: NO_PARSER },
      ...(flags.device !== undefined ? { device: flags.device } : {}),
      ...(flags.threads !== undefined ? { threads: flags.threads } : {}),
      ...(flags.kvCache !== undefined ? { kvCache: { size: flags.kvCache } } : {}),
      ...(bar ? { onProgress: (progress) => bar.update(progress) } : {}),
    });
    bar?.finish();
    if (!flags.quiet) io.stderr.write(`weft: loaded ${flags.model} in ${((performance.now() - started) / 1000).toFixed(2)} s\n`);
    return pipeline;
  } catch (error) {
    bar?.finish();
    throw error;
  }
}
