/**
 * Server-sent events for streamed completions: `data: <json>\n\n` per chunk,
 * `data: [DONE]\n\n` at the end. Writes wait for the socket to drain, so a
 * slow reader slows only its own request (the pipeline buffers its tokens);
 * once the client is gone, writes are dropped.
 */

import type { ServerResponse } from 'node:http';

export class SseWriter {
  private gone = false;

  constructor(private readonly res: ServerResponse) {
    res.once('close', () => (this.gone = true));
  }

  /** Whether the client has gone (closed, reset or timed out). */
  get closed(): boolean {
    return this.gone || this.res.destroyed;
  }

  start(): void {
    this.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      // Proxies (nginx) must not buffer a token stream.
      'x-accel-buffering': 'no',
    });
    this.res.flushHeaders();
  }

  send(data: unknown): Promise<void> {
    return this.write(`data: ${JSON.stringify(data)}\n\n`);
  }

  async end(): Promise<void> {
    await this.write('data: [DONE]\n\n');
    if (!this.closed) this.res.end();
  }

  private write(text: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.res.write(text)) return Promise.resolve();
    return new Promise((resolve) => {
      const settle = (): void => {
        this.res.off('drain', settle).off('close', settle);
        resolve();
      };
      this.res.on('drain', settle).on('close', settle);
    });
  }
}
