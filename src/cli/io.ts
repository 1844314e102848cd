/** Where the CLI reads and writes; process streams in real use, collectors in tests. */
export interface TextSink {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export interface CliIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: TextSink;
  stderr: TextSink;
  env: Record<string, string | undefined>;
  /** Calls `handler` on Ctrl-C (SIGINT) until the returned function is called. */
  onInterrupt(handler: () => void): () => void;
}

export function processIo(): CliIo {
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
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

/** ANSI styling only for terminals, and never when NO_COLOR is set (https://no-color.org). */
export function useColor(sink: TextSink, env: CliIo['env']): boolean {
  return sink.isTTY === true && !env.NO_COLOR;
}

export const ansi = {
  dim: (text: string) => `\x1b[2m${text}\x1b[22m`,
  bold: (text: string) => `\x1b[1m${text}\x1b[22m`,
  clearLine: '\r\x1b[2K',
};
