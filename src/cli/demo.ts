import type { CliIo } from './io.js';
import { EXIT_FAILURE } from './usage-error.js';

export interface DemoOptions {
  /** A demo model folder; default: the repository's models/weft-demo. */
  model?: string;
  threads?: number;
  quiet?: boolean;
  io: CliIo;
}

/**
 * `weft demo`: weft's own tiny model answering several questions at once with
 * reasoning and tool calls. Placeholder until the demo model is trained.
 * Resolves to the process exit code.
 */
export async function runDemo(options: DemoOptions): Promise<number> {
  options.io.stderr.write(
    'weft demo: the demo model (models/weft-demo) is not built yet.\n' +
      'Meanwhile, try: weft generate --model <hugging-face-model-dir> "Once upon a time"\n',
  );
  return EXIT_FAILURE;
}
