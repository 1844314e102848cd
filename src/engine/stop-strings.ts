/**
 * Stop strings over a request's text deltas: text that could still be the start
 * of a stop string is held back until it can no longer match.
 */

export interface StopResult {
  /** Text that is safe to emit now. */
  readonly text: string;
  /** Set when a stop string matched: the text stops before it. */
  readonly stopped: boolean;
}

/**
 * Holds back the last (longest stop - 1) characters until they cannot start a
 * stop string. A matched stop string is not part of the output.
 */
export class StopStringMatcher {
  private readonly stops: readonly string[];
  /** No stop strings: `push` passes text through unchanged, so a caller may skip it. */
  readonly isEmpty: boolean;
  private readonly holdBack: number;
  private pending = '';

  constructor(stops: readonly string[]) {
    this.stops = stops;
    this.isEmpty = stops.length === 0;
    this.holdBack = stops.reduce((max, stop) => Math.max(max, stop.length - 1), 0);
  }

  push(delta: string): StopResult {
    if (this.stops.length === 0) return { text: delta, stopped: false };
    this.pending += delta;
    let earliest = -1;
    for (const stop of this.stops) {
      const at = this.pending.indexOf(stop);
      if (at !== -1 && (earliest === -1 || at < earliest)) earliest = at;
    }
    if (earliest !== -1) {
      const text = this.pending.slice(0, earliest);
      this.pending = '';
      return { text, stopped: true };
    }
    let emit = Math.max(0, this.pending.length - this.holdBack);
    // Never split a surrogate pair between what is emitted and what is held.
    if (emit > 0 && isHighSurrogate(this.pending.charCodeAt(emit - 1))) emit--;
    const text = this.pending.slice(0, emit);
    this.pending = this.pending.slice(emit);
    return { text, stopped: false };
  }

  /** The held-back text, released when generation ends for another reason. */
  flush(): string {
    const text = this.pending;
    this.pending = '';
    return text;
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
