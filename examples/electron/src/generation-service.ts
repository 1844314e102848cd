/**
 * The main process's side of the example: IPC handlers that stream weft
 * generations to renderer windows, cancel them, and clean up after windows.
 *
 * It imports nothing from Electron. It talks to `ipcMain` and `webContents`
 * through the few members declared below, which Electron's objects have, so
 * tests run it under plain Node with stand-ins at exactly this boundary
 * (test/electron/generation-service.test.ts).
 *
 * Invariants: every accepted `weft:generate` gets exactly one `weft:end`
 * (unless its window is gone); a window can cancel only its own requests; a
 * window that closes cancels all of its requests, and nothing is sent to it
 * afterwards. One pipeline serves every window, so their requests are batched.
 */
import type { ChatMessage, ChatOptions, Pipeline, ToolCall, ToolDefinition } from 'weft';
import { Channels, type AgentPart, type EndMessage, type GenerateRequest } from './channels.js';

/** The part of Electron's WebContents used here. */
export interface WebContentsLike {
  readonly id: number;
  send(channel: string, ...args: unknown[]): void;
  isDestroyed(): boolean;
  once(event: 'destroyed', listener: () => void): unknown;
}

/** The part of Electron's IpcMainInvokeEvent used here. */
export interface InvokeEventLike {
  readonly sender: WebContentsLike;
}

/** The part of Electron's ipcMain used here. */
export interface IpcMainLike {
  handle(channel: string, listener: (event: InvokeEventLike, ...args: any[]) => unknown): void;
  removeHandler(channel: string): void;
}

export type ToolImplementation = (args: Record<string, unknown>) => unknown | Promise<unknown>;

export interface GenerationServiceOptions {
  /** Tools offered to the model; the main process runs them (the renderer cannot add any). */
  readonly tools?: ToolDefinition[];
  readonly toolImplementations?: Record<string, ToolImplementation>;
  /** Most model calls per request when tools are called. Default 4. */
  readonly maxRounds?: number;
  /** Defaults for every request; the renderer may set only maxTokens and temperature. */
  readonly chatOptions?: ChatOptions;
}

interface Running {
  readonly controller: AbortController;
}

export class GenerationService {
  /** webContents id -> that window's running requests by requestId. */
  private readonly windows = new Map<number, Map<string, Running>>();

  constructor(
    private readonly pipeline: Pipeline,
    private readonly options: GenerationServiceOptions = {},
  ) {}

  /** Registers the IPC handlers; returns a function that removes them. */
  register(ipc: IpcMainLike): () => void {
    ipc.handle(Channels.generate, (event, request: unknown) => this.generate(event.sender, request));
    ipc.handle(Channels.cancel, (event, requestId: unknown) => this.cancel(event.sender.id, requestId));
    return () => {
      ipc.removeHandler(Channels.generate);
      ipc.removeHandler(Channels.cancel);
    };
  }

  /** Requests running now, over all windows. */
  get activeRequests(): number {
    let count = 0;
    for (const requests of this.windows.values()) count += requests.size;
    return count;
  }

  /** Cancels one request of one window. */
  cancel(windowId: number, requestId: unknown): boolean {
    const running = typeof requestId === 'string' ? this.windows.get(windowId)?.get(requestId) : undefined;
    running?.controller.abort();
    return running !== undefined;
  }

  /**
   * Starts a request and returns at once; parts and the end go to `sender`.
   * Bad input from the renderer ends the request with status "error".
   */
  generate(sender: WebContentsLike, request: unknown): void {
    const requestId = isObject(request) && typeof request.requestId === 'string' ? request.requestId : undefined;
    if (requestId === undefined) throw new TypeError('weft:generate needs { requestId: string, messages }');
    const requests = this.windowRequests(sender);
    if (requests.has(requestId)) {
      send(sender, Channels.end, { requestId, status: 'error', code: 'DUPLICATE_REQUEST', message: `request ${requestId} is already running` } satisfies EndMessage);
      return;
    }
    const running: Running = { controller: new AbortController() };
    requests.set(requestId, running);
    void this.run(sender, request as GenerateRequest, running.controller.signal)
      .then((end) => send(sender, Channels.end, end))
      .finally(() => requests.delete(requestId));
  }

  /** Streams one request to its end, running tool calls between model rounds. */
  private async run(sender: WebContentsLike, request: GenerateRequest, signal: AbortSignal): Promise<EndMessage> {
    const { requestId } = request;
    if (!Array.isArray(request.messages)) return { requestId, status: 'error', code: 'INVALID_OPTION', message: 'messages: expected an array' };
    const messages: ChatMessage[] = [...request.messages];
    const maxRounds = this.options.maxRounds ?? 4;
    const options: ChatOptions = {
      ...this.options.chatOptions,
      ...(this.options.tools && { tools: this.options.tools }),
      ...(request.maxTokens !== undefined && { maxTokens: request.maxTokens }),
      ...(request.temperature !== undefined && { temperature: request.temperature }),
      signal,
    };
    try {
      for (let round = 1; ; round++) {
        let content = '';
        let reasoning = '';
        const toolCalls: ToolCall[] = [];
        for await (const part of this.pipeline.stream(messages, options)) {
          send(sender, Channels.part, { requestId, part });
          if (part.type === 'text-delta') content += part.text;
          else if (part.type === 'reasoning-delta') reasoning += part.text;
          else if (part.type === 'tool-call') toolCalls.push({ id: part.id, name: part.name, arguments: part.arguments });
          else if (part.type === 'finish' && (part.finishReason !== 'tool_calls' || round >= maxRounds)) {
            return { requestId, status: 'done', finishReason: part.finishReason, usage: part.usage, rounds: round };
          }
        }
        messages.push({ role: 'assistant', content, reasoning, toolCalls });
        for (const call of toolCalls) {
          const result = await this.runTool(call);
          send(sender, Channels.part, { requestId, part: { type: 'tool-result', id: call.id, name: call.name, result } satisfies AgentPart });
          messages.push({ role: 'tool', content: JSON.stringify(result), toolCallId: call.id, name: call.name });
        }
        if (signal.aborted) return { requestId, status: 'cancelled' };
      }
    } catch (error) {
      if (signal.aborted) return { requestId, status: 'cancelled' };
      const code = isObject(error) && typeof error.code === 'string' ? error.code : 'ERROR';
      return { requestId, status: 'error', code, message: error instanceof Error ? error.message : String(error) };
    }
  }

  private async runTool(call: ToolCall): Promise<unknown> {
    const implementation = this.options.toolImplementations?.[call.name];
    if (implementation === undefined) return { error: `unknown tool ${call.name}` };
    try {
      return await implementation(call.arguments);
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) };
    }
  }

  private windowRequests(sender: WebContentsLike): Map<string, Running> {
    let requests = this.windows.get(sender.id);
    if (requests === undefined) {
      const created = new Map<string, Running>();
      requests = created;
      this.windows.set(sender.id, created);
      // A closed window cancels what it started; its in-flight requests end without messages.
      sender.once('destroyed', () => {
        for (const running of created.values()) running.controller.abort();
        this.windows.delete(sender.id);
      });
    }
    return requests;
  }
}

/** Sends unless the window is gone (Electron throws when sending to a destroyed webContents). */
function send(sender: WebContentsLike, channel: string, message: unknown): void {
  if (!sender.isDestroyed()) sender.send(channel, message);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
