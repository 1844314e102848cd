import type { LoadProgress } from '../pipeline/options.js';
import { ansi, type TextSink } from './io.js';

/**
 * Shows model loading on stderr: a redrawn bar on a terminal; on a pipe or file,
 * one line per phase (a redrawn bar would fill logs with carriage returns).
 * `loaded` and `total` are bytes (the CPU backend reports weight bytes read).
 */
export class ProgressBar {
  private lastPhase: string | undefined;
  private lastDrawn = '';
  private active = false;

  constructor(private readonly sink: TextSink) {}

  update({ phase, loaded, total }: LoadProgress): void {
    const isNewPhase = phase !== this.lastPhase;
    this.lastPhase = phase;
    if (phase === 'done') return;
    if (!this.sink.isTTY) {
      if (isNewPhase) this.sink.write(`weft: loading ${phase}${total > 0 ? ` (${formatBytes(total)})` : ''}\n`);
      return;
    }
    let line = `loading ${phase}`;
    let key = line;
    if (total > 0) {
      const fraction = Math.min(1, Math.max(0, loaded / total));
      const sizes = `${formatBytes(loaded)} / ${formatBytes(total)}`;
      const width = Math.max(10, Math.min(40, (this.sink.columns ?? 80) - line.length - sizes.length - 10));
      const filled = Math.round(fraction * width);
      const percent = Math.floor(fraction * 100);
      line += ` [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(percent).padStart(3)}% ${sizes}`;
      key += percent;
    }
    // Redraw when the percentage moves, not on every tensor: big models report thousands.
    if (key === this.lastDrawn) return;
    this.sink.write(`${ansi.clearLine}${line}`);
    this.lastDrawn = key;
    this.active = true;
  }

  /** Removes the bar, leaving the cursor at the start of an empty line. */
  finish(): void {
    if (this.active) this.sink.write(ansi.clearLine);
    this.active = false;
    this.lastDrawn = '';
  }
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}
