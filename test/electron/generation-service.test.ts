/**
 * examples/electron's main-process module under plain Node. Electron's binary
 * cannot be installed here (it downloads at install time), so ipcMain and each
 * window's webContents are stood in for at the module's IPC boundary: the fakes
 * below have exactly the members the module uses, and record what it sends.
 * The pipeline and the model are real (weft's demo model).
 */
import { EventEmitter } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pipeline } from '../../src/index.js';
import { Channels, type EndMessage, type PartMessage } from '../../examples/electron/src/channels.js';
import { demoToolImplementations } from '../../examples/electron/src/demo-tools.js';
import { GenerationService, type InvokeEventLike, type IpcMainLike, type WebContentsLike } from '../../examples/electron/src/generation-service.js';
import { demoModelDir, toolDefinitions } from '../ai-sdk/demo-tools.js';

const present = existsSync(join(demoModelDir, 'model.safetensors'));
if (!present) console.warn('electron generation-service.test: models/weft-demo is missing; skipping');

/** A window's webContents: records messages, and can be destroyed like a closed window. */
class FakeWebContents extends EventEmitter implements WebContentsLike {
  private static nextId = 1;
  readonly id = FakeWebContents.nextId++;
  readonly parts = new Map<string, PartMessage['part'][]>();
  readonly ends: EndMessage[] = [];
  private destroyed = false;
  private readonly waiters = new Map<string, (end: EndMessage) => void>();
  onPart: ((message: PartMessage) => void) | undefined;

  send(channel: string, message: unknown): void {
    if (this.destroyed) throw new Error('Object has been destroyed'); // what Electron does
    if (channel === Channels.part) {
      const { requestId, part } = message as PartMessage;
      this.parts.set(requestId, [...(this.parts.get(requestId) ?? []), part]);
      this.onPart?.(message as PartMessage);
    } else if (channel === Channels.end) {
      const end = message as EndMessage;
      this.ends.push(end);
      this.waiters.get(end.requestId)?.(end);
    }
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  destroy(): void {
    this.destroyed = true;
    this.emit('destroyed');
  }
  ended(requestId: string): Promise<EndMessage> {
    const done = this.ends.find((end) => end.requestId === requestId);
    return done ? Promise.resolve(done) : new Promise((resolve) => this.waiters.set(requestId, resolve));
  }
  text(requestId: string): string {
    return (this.parts.get(requestId) ?? []).map((part) => (part.type === 'text-delta' ? part.text : '')).join('');
  }
}

/** ipcMain: handlers by channel, and invoke() as a renderer's ipcRenderer.invoke would reach them. */
class FakeIpcMain implements IpcMainLike {
  readonly handlers = new Map<string, (event: InvokeEventLike, ...args: any[]) => unknown>();
  handle(channel: string, listener: (event: InvokeEventLike, ...args: any[]) => unknown): void {
    if (this.handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    this.handlers.set(channel, listener);
  }
  removeHandler(channel: string): void {
    this.handlers.delete(channel);
  }
  async invoke(sender: WebContentsLike, channel: string, ...args: unknown[]): Promise<unknown> {
    const handler = this.handlers.get(channel);
    if (!handler) throw new Error(`No handler registered for '${channel}'`);
    return handler({ sender }, ...args);
  }
}

const ask = (content: string) => [{ role: 'user' as const, content }];

describe.skipIf(!present)('examples/electron generation service (IPC stood in for)', () => {
  let pipe: Pipeline;
  let ipc: FakeIpcMain;
  let service: GenerationService;
  let unregister: () => void;

  beforeAll(async () => {
    pipe = await Pipeline.create({ model: demoModelDir, threads: 1, parsers: { tool: 'qwen3coder', reasoning: 'qwen3' } });
    ipc = new FakeIpcMain();
    service = new GenerationService(pipe, { tools: toolDefinitions, toolImplementations: demoToolImplementations, chatOptions: { temperature: 0 } });
    unregister = service.register(ipc);
  });
  afterAll(async () => {
    unregister?.();
    await pipe?.close();
  });

  it('several windows generate at once; each gets only its own parts and one end', async () => {
    const windows = [new FakeWebContents(), new FakeWebContents(), new FakeWebContents()];
    const questions = ['What is the capital of Japan?', 'What is 37 times 12.5?', "What's the weather in Paris in fahrenheit?"];
    let peak = 0;
    pipe.on('step', () => (peak = Math.max(peak, pipe.stats().running)));
    // Both windows use the same request id: ids are per window.
    await Promise.all(windows.map((window, i) => ipc.invoke(window, Channels.generate, { requestId: 'r1', messages: ask(questions[i]!) })));
    const ends = await Promise.all(windows.map((window) => window.ended('r1')));
    expect(peak).toBe(3);
    expect(ends.map((end) => end.status)).toEqual(['done', 'done', 'done']);
    expect(windows[0]!.text('r1')).toMatch(/Tokyo/);
    // The main process ran the tool and fed the result back for a second round.
    const times = windows[1]!.parts.get('r1')!;
    expect(times).toContainEqual({ type: 'tool-call', index: 0, id: expect.any(String), name: 'calculator', arguments: { operation: 'multiply', a: 37, b: 12.5 } });
    expect(times).toContainEqual({ type: 'tool-result', id: expect.any(String), name: 'calculator', result: { result: 462.5 } });
    expect(windows[1]!.text('r1')).toContain('462.5');
    expect(ends[1]).toMatchObject({ finishReason: 'stop', rounds: 2 });
    expect(windows[2]!.parts.get('r1')).toContainEqual(expect.objectContaining({ type: 'tool-call', name: 'get_weather', arguments: { city: 'Paris', unit: 'fahrenheit' } }));
    for (const window of windows) expect(window.ends).toHaveLength(1);
    expect(service.activeRequests).toBe(0);
  });

  it('the cancel button cancels only that window’s request; the others finish', async () => {
    const [a, b, c] = [new FakeWebContents(), new FakeWebContents(), new FakeWebContents()];
    b.onPart = ({ requestId }) => {
      if (b.parts.get(requestId)!.length === 3) void ipc.invoke(b, Channels.cancel, requestId);
    };
    await ipc.invoke(a, Channels.generate, { requestId: 'x', messages: ask('What is the capital of Japan?') });
    await ipc.invoke(b, Channels.generate, { requestId: 'x', messages: ask('Send an urgent email to Zoe about the budget.') });
    await ipc.invoke(c, Channels.generate, { requestId: 'x', messages: ask('What is 37 times 12.5?') });
    // Another window cannot cancel b's request, nor a request that does not exist.
    expect(await ipc.invoke(a, Channels.cancel, 'nope')).toBe(false);
    const [endA, endB, endC] = await Promise.all([a.ended('x'), b.ended('x'), c.ended('x')]);
    expect(endB).toEqual({ requestId: 'x', status: 'cancelled' });
    expect(b.parts.get('x')!.length).toBeLessThan(10);
    expect(endA).toMatchObject({ status: 'done', finishReason: 'stop' });
    expect(endC).toMatchObject({ status: 'done', finishReason: 'stop' });
    expect(c.text('x')).toContain('462.5');
    expect(pipe.stats().running).toBe(0);
  });

  it('closing a window cancels its requests and sends it nothing more', async () => {
    const closing = new FakeWebContents();
    const staying = new FakeWebContents();
    closing.onPart = () => {
      if (!closing.isDestroyed()) closing.destroy();
    };
    const finished: string[] = [];
    const onFinish = ({ finishReason }: { finishReason: string }) => finished.push(finishReason);
    pipe.on('request-finish', onFinish);
    await ipc.invoke(closing, Channels.generate, { requestId: 'a', messages: ask('What is the capital of Japan?') });
    await ipc.invoke(closing, Channels.generate, { requestId: 'b', messages: ask('What is 37 times 12.5?') });
    await ipc.invoke(staying, Channels.generate, { requestId: 'a', messages: ask('What is the capital of Japan?') });
    await staying.ended('a');
    await new Promise((resolve) => setTimeout(resolve, 50));
    pipe.off('request-finish', onFinish);
    expect(closing.ends).toEqual([]);
    expect(finished.filter((reason) => reason === 'aborted')).toHaveLength(2);
    expect(staying.text('a')).toMatch(/Tokyo/);
    expect(service.activeRequests).toBe(0);
    expect(pipe.stats().running).toBe(0);
  });

  it('bad input from a renderer ends that request with a typed error and harms nothing else', async () => {
    const window = new FakeWebContents();
    await ipc.invoke(window, Channels.generate, { requestId: 'bad', messages: ask('Hi'), temperature: -3 });
    expect(await window.ended('bad')).toMatchObject({ status: 'error', code: 'INVALID_OPTION', message: expect.stringMatching(/temperature/) });
    await ipc.invoke(window, Channels.generate, { requestId: 'worse', messages: 'not a list' });
    expect(await window.ended('worse')).toMatchObject({ status: 'error', code: 'INVALID_OPTION' });
    await expect(ipc.invoke(window, Channels.generate, { messages: ask('Hi') })).rejects.toThrow(/requestId/);
    // The same id twice while the first runs: the second is refused, the first completes.
    await ipc.invoke(window, Channels.generate, { requestId: 'twice', messages: ask('What is the capital of Japan?') });
    await ipc.invoke(window, Channels.generate, { requestId: 'twice', messages: ask('What is the capital of Japan?') });
    // Refused at once, while the first is still generating.
    expect(window.ends.filter((end) => end.requestId === 'twice')).toEqual([expect.objectContaining({ status: 'error', code: 'DUPLICATE_REQUEST' })]);
    await new Promise<void>((resolve) => {
      const check = () => (window.ends.filter((end) => end.requestId === 'twice').length === 2 ? resolve() : setTimeout(check, 10));
      check();
    });
    expect(window.ends.filter((end) => end.requestId === 'twice')[1]).toMatchObject({ status: 'done' });
  });
});

describe('examples/electron preload', () => {
  it('uses the channel names of channels.ts (a sandboxed preload cannot import them)', () => {
    const preload = readFileSync(join(demoModelDir, '..', '..', 'examples', 'electron', 'src', 'preload.ts'), 'utf8');
    const used = [...preload.matchAll(/'(weft:[a-z]+)'/g)].map((match) => match[1]).sort();
    expect(used).toEqual(Object.values(Channels).sort());
  });
});
