/**
 * Text found where only whitespace belongs (between tags of a call). It is collected until the
 * next tag so that the warning quotes the same text however the output was chunked.
 */
const KEEP = 200;

export class StrayText {
  private text = '';

  add(piece: string): void {
    if (this.text.length < KEEP && piece.length > 0) this.text = (this.text + piece).slice(0, KEEP);
  }

  /** The collected text, trimmed (null when it was only whitespace); resets the collector. */
  take(): string | null {
    const text = this.text.trim();
    this.text = '';
    return text.length > 0 ? text : null;
  }
}
