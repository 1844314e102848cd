/** Shared set-up for the `weft serve` tests: the demo model behind a real server on loopback. */

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pipeline, WeftServer, type PipelineOptions, type ToolDefinition } from '../../src/index.js';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const demoModel = join(root, 'models', 'weft-demo');
export const demoPresent = existsSync(join(demoModel, 'model.safetensors'));
if (!demoPresent) console.warn('serve tests: models/weft-demo is missing; skipping');

export const demoTools = (): ToolDefinition[] => JSON.parse(readFileSync(join(demoModel, 'tools.json'), 'utf8')) as ToolDefinition[];
export const DEMO_PARSERS = { tool: 'qwen3coder', reasoning: 'qwen3' } as const;

export interface InProcessServer {
  pipe: Pipeline;
  server: WeftServer;
  baseURL: string;
  close(): Promise<void>;
}

export async function startDemoServer(
  options: { apiKey?: string; pipeline?: Partial<Omit<PipelineOptions, 'isolation'>>; bodyTimeoutMs?: number; maxBodyBytes?: number; guidedTools?: boolean } = {},
): Promise<InProcessServer> {
  const pipe = await Pipeline.create({ model: demoModel, threads: 2, ...options.pipeline });
  const server = await WeftServer.start({
    pipeline: pipe,
    modelName: 'weft-demo',
    parsers: DEMO_PARSERS,
    port: 0,
    ...(options.apiKey !== undefined && { apiKey: options.apiKey }),
    ...(options.bodyTimeoutMs !== undefined && { bodyTimeoutMs: options.bodyTimeoutMs }),
    ...(options.maxBodyBytes !== undefined && { maxBodyBytes: options.maxBodyBytes }),
    ...(options.guidedTools !== undefined && { guidedTools: options.guidedTools }),
  });
  return {
    pipe,
    server,
    baseURL: `${server.url}/v1`,
    close: async () => {
      await server.close(1000);
      await pipe.close();
    },
  };
}

/** `weft serve` as its own process (through tsx, from the sources), and the URL it printed. */
export interface ServeProcess {
  child: ChildProcess;
  url: string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export async function spawnServe(args: string[], timeoutMs = 30_000): Promise<ServeProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts'), 'serve', '--port', '0', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  child.stdout!.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`weft serve did not start in ${timeoutMs} ms:\n${err}`)), timeoutMs);
    const look = (): void => {
      const match = /serving "[^"]*" at (http:\/\/[^\s]+)\/v1/.exec(err);
      if (match) {
        clearTimeout(timer);
        child.stderr!.off('data', look);
        resolve(match[1]!);
      }
    };
    child.stderr!.on('data', look);
    void exited.then(({ code }) => reject(new Error(`weft serve exited (${code}) before listening:\n${err}`)));
  });
  return { child, url, stderr: () => err, exited };
}

/** Reads an SSE response body into its `data:` payloads (without [DONE]). */
export function sseEvents(text: string): unknown[] {
  return text
    .split('\n\n')
    .map((block) => block.trim())
    .filter((block) => block.startsWith('data: ') && block !== 'data: [DONE]')
    .map((block) => JSON.parse(block.slice('data: '.length)) as unknown);
}
