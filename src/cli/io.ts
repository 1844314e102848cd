/** Where the CLI reads and writes; process streams in real use, collectors in tests. */
export interface TextSink {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
  /** The process stream underneath, for readline's prompt and echo; absent in tests. */
  readonly stream?: NodeJS.WritableStream;
}

export interface CliIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: TextSink;
  stderr: TextSink;
  env: Record<string, string | undefined>;
  /** Calls `handler` on Ctrl-C (SIGINT) until the returned function is called. */
  onInterrupt(handler: () => void): () => void;
  /**
   * Calls `handler` once stdout's reader has gone (EPIPE: `weft generate … | head -c 10`),
   * until the returned function is called. Writes after that are dropped.
   */
  onOutputClosed?(handler: () => void): () => void;
}

export function processIo(): CliIo {
  const stdout = new ClosablePipe(process.stdout);
  return {
    stdin: process.stdin,
    stdout,
    stderr: new ClosablePipe(process.stderr),
    env: process.env,
    onOutputClosed: (handler) => stdout.onClosed(handler),
    onInterrupt(handler) {
      // Ctrl-C asks for a clean stop; a second one within two seconds means "quit now".
      let last = -Infinity;
      const listener = (): void => {
        const now = performance.now();
        if (now - last < 2000) process.exit(130);
        last = now;
        handler();
      };
      process.on('SIGINT', listener);
      return () => process.off('SIGINT', listener);
    },
  };
}

/**
 * A process stream whose reader may go away. Node emits EPIPE as an 'error'
 * event, which crashes the process with a stack trace when nobody listens; a
 * closed pipe is a normal end for a command line tool, so it is turned into a
 * "closed" notice and later writes are dropped.
 */
class ClosablePipe implements TextSink {
  private closed = false;
  private readonly handlers = new Set<() => void>();

  constructor(readonly stream: NodeJS.WriteStream) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      this.closed = true;
      for (const handler of [...this.handlers]) handler();
      this.handlers.clear();
    });
  }

  get isTTY(): boolean {
    return this.stream.isTTY === true;
  }

  get columns(): number | undefined {
    return this.stream.columns;
  }

  write(text: string): boolean {
    if (this.closed) return false;
    return this.stream.write(text);
  }

  onClosed(handler: () => void): () => void {
    if (this.closed) {
      handler();
      return () => {};
    }
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }
}

/** ANSI styling only for terminals, and never when NO_COLOR is set (https://no-color.org). */
export function useColor(sink: TextSink, env: CliIo['env']): boolean {
  return sink.isTTY === true && !env.NO_COLOR;
}

export const ansi = {
  dim: (text: string) => `\x1b[2m${text}\x1b[22m`,
  bold: (text: string) => `\x1b[1m${text}\x1b[22m`,
  clearLine: '\r\x1b[2K',
};
