import { InvalidOptionError } from '../errors.js';
import { Pipeline } from '../create.js';
import { parseCommandLine } from './args.js';
import { describeError, runChat } from './chat.js';
import { runServe } from '../serve/run-serve.js';
import { runDemo } from './demo.js';
import { runDoctor } from './doctor.js';
import { runEmbed } from './embed.js';
import { runRerank } from './rerank.js';
import { runGenerate } from './generate.js';
import { helpText, weftVersion } from './help.js';
import type { CliIo } from './io.js';
import type { OpenPipeline } from './pipeline-port.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError } from './usage-error.js';

export interface CliDependencies {
  /** How a model is opened; tests may pass a stand-in. Default: Pipeline.create. */
  openPipeline?: OpenPipeline;
}

const openRealPipeline: OpenPipeline = (options) => Pipeline.create(options);

/** Runs one weft command line and resolves to the exit code. Never throws. */
export async function runCli(argv: readonly string[], io: CliIo, deps: CliDependencies = {}): Promise<number> {
  const openPipeline = deps.openPipeline ?? openRealPipeline;
  try {
    const command = parseCommandLine(argv);
    switch (command.name) {
      case 'help':
        io.stdout.write(helpText(command.topic));
        return EXIT_OK;
      case 'version':
        io.stdout.write(`${weftVersion()}\n`);
        return EXIT_OK;
      case 'generate':
        return await runGenerate(command, io, openPipeline);
      case 'chat':
        return await runChat(command, io, openPipeline);
      case 'embed':
        return await runEmbed(command, io, openPipeline);
      case 'rerank':
        return await runRerank(command, io, openPipeline);
      case 'serve':
        return await runServe(command.args, { stdout: io.stdout, stderr: io.stderr, env: io.env });
      case 'doctor':
        return await runDoctor(command, io);
      case 'demo':
        return await runDemo({
          io,
          quiet: command.quiet,
          ...(command.model !== undefined ? { model: command.model } : {}),
          ...(command.threads !== undefined ? { threads: command.threads } : {}),
        });
    }
  } catch (error) {
    if (error instanceof UsageError) {
      const helpHint = error.command ? `weft ${error.command} --help` : 'weft --help';
      io.stderr.write(`weft: ${error.message}\nRun \`${helpHint}\` for usage.\n`);
      return EXIT_USAGE;
    }
    io.stderr.write(`weft: ${describeError(error)}\n`);
    // A bad option value that only the pipeline could judge (e.g. a KV cache too small) is a usage error too.
    return error instanceof InvalidOptionError ? EXIT_USAGE : EXIT_FAILURE;
  }
}
