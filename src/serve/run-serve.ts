/**
 * `weft serve`: load the model, serve it until SIGINT or SIGTERM, shut down
 * gracefully, free the model. Resolves to the exit code; never throws.
 */

import { basename, resolve } from 'node:path';
import { Pipeline } from '../create.js';
import { InvalidOptionError, WeftError } from '../errors.js';
import type { ModelPipeline } from '../pipeline/face.js';
import type { PipelineOptions } from '../pipeline/options.js';
import { activeParsers, inferParsers, NO_PARSER } from '../tool-formats/infer.js';
import { parseServeArgs, SERVE_HELP, ServeUsageError } from './command-line.js';
import { WeftServer } from './server.js';

/** Where serve writes and how it learns to stop; tests pass their own. */
export interface ServeIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly env: Record<string, string | undefined>;
  /** Resolves with the signal's name when the server should stop. */
  readonly shutdownSignal?: Promise<string>;
  /** Called once the server listens (tests read the port from it). */
  readonly onListening?: (server: WeftServer) => void;
  readonly openPipeline?: (options: PipelineOptions) => Promise<ModelPipeline>;
}

export async function runServe(argv: readonly string[], io: ServeIo): Promise<number> {
  let command;
  try {
    command = parseServeArgs(argv);
  } catch (error) {
    if (!(error instanceof ServeUsageError)) throw error;
    io.stderr.write(`weft: ${error.message}\nRun \`weft serve --help\` for usage.\n`);
    return 2;
  }
  if (command.help) {
    io.stdout.write(SERVE_HELP);
    return 0;
  }
  const log = (line: string): void => void io.stderr.write(`weft serve: ${line}\n`);
  let pipeline: ModelPipeline | undefined;
  let server: WeftServer | undefined;
  try {
    const started = performance.now();
    let lastPhase = '';
    pipeline = await (io.openPipeline ?? Pipeline.create)({
      model: command.model,
      ...command.pipeline,
      logger: log,
      // The server picks the parsers (below) and names them on every request: the pipeline infers none of its own.
      parsers: { tool: NO_PARSER, reasoning: NO_PARSER },
      ...(!command.quiet && {
        onProgress: ({ phase }) => {
          if (phase !== lastPhase && phase !== 'done') log(`loading ${phase}`);
          lastPhase = phase;
        },
      }),
    });
    const template = pipeline.chatTemplate;
    const parsers = activeParsers(
      await inferParsers(command.parsers, {
        render: (messages, options) => {
          if (template === undefined) throw new Error('no chat template');
          return template.render(messages, options);
        },
        hasToken: (text) => pipeline!.tokenizer.tokenToId(text) !== undefined,
      }),
    );
    const modelName = command.modelName ?? basename(resolve(command.model));
    server = await WeftServer.start({
      pipeline,
      modelName,
      parsers,
      guidedTools: command.guidedTools,
      host: command.host,
      port: command.port,
      ...((command.apiKey ?? io.env.WEFT_API_KEY) && { apiKey: command.apiKey ?? io.env.WEFT_API_KEY }),
      ...(command.maxBodyBytes !== undefined && { maxBodyBytes: command.maxBodyBytes }),
      ...(command.bodyTimeoutMs !== undefined && { bodyTimeoutMs: command.bodyTimeoutMs }),
    });
    const stats = pipeline.stats();
    log(
      `loaded ${command.model} in ${((performance.now() - started) / 1000).toFixed(2)} s; ` +
        `KV cache ${stats.kv.pools[0]?.totalBlocks ?? 0} blocks of ${stats.kv.blockSize} tokens; ` +
        `parsers: tool ${parsers.tool ?? 'none'}, reasoning ${parsers.reasoning ?? 'none'}` +
        (command.guidedTools ? '; tool-guided generation on' : ''),
    );
    log(`serving "${modelName}" at ${server.url}/v1`);
    io.onListening?.(server);
    const signal = await (io.shutdownSignal ?? processSignal());
    log(`${signal}: stopping (running requests get ${command.shutdownTimeoutMs / 1000} s)`);
    await server.close(command.shutdownTimeoutMs);
    log('stopped');
    return 0;
  } catch (error) {
    io.stderr.write(`weft: ${error instanceof WeftError ? `${error.message} (${error.code})` : (error as Error).message}\n`);
    return error instanceof InvalidOptionError ? 2 : 1;
  } finally {
    await server?.close(0);
    await pipeline?.close();
  }
}

/** The first SIGINT or SIGTERM. */
function processSignal(): Promise<string> {
  return new Promise((resolve) => {
    const handler = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', handler).off('SIGTERM', handler);
      resolve(signal);
    };
    process.on('SIGINT', handler).on('SIGTERM', handler);
  });
}
