import { ansi, useColor, type CliIo } from './io.js';
import type { StreamPart } from './pipeline-port.js';

/**
 * Writes streamed parts to stdout: text as it comes, reasoning dimmed (on a
 * terminal) or marked with <think> tags (on a pipe), tool calls on their own line.
 */
export class PartWriter {
  private inReasoning = false;
  private lastChar = '\n';
  private readonly color: boolean;

  constructor(private readonly io: CliIo) {
    this.color = useColor(io.stdout, io.env);
  }

  write(part: StreamPart): void {
    switch (part.type) {
      case 'reasoning-delta':
        if (!this.inReasoning) {
          this.inReasoning = true;
          if (!this.color) this.emit('<think>');
        }
        this.emit(this.color ? ansi.dim(part.text) : part.text, part.text);
        return;
      case 'text-delta':
        this.endReasoning();
        this.emit(part.text);
        return;
      case 'tool-call': {
        this.endReasoning();
        const call = `→ ${part.name}(${JSON.stringify(part.arguments)})`;
        this.emit(`${this.lastChar === '\n' ? '' : '\n'}${this.color ? ansi.bold(call) : call}\n`, '\n');
        return;
      }
      default:
        // tool-call-start/-delta: the complete call is shown once it is parsed; finish: the caller's.
        return;
    }
  }

  /** Ends the output with a newline, so the shell prompt or the stats line starts on its own line. */
  end(): void {
    this.endReasoning();
    if (this.lastChar !== '\n') this.emit('\n');
  }

  private endReasoning(): void {
    if (!this.inReasoning) return;
    this.inReasoning = false;
    if (!this.color) this.emit('</think>');
    this.emit(this.lastChar === '\n' ? '' : '\n');
  }

  private emit(text: string, plain = text): void {
    if (text === '') return;
    this.io.stdout.write(text);
    if (plain.length > 0) this.lastChar = plain[plain.length - 1] as string;
  }
}
