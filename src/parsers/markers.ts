/**
 * Marker search with hold-back. A text state consumes everything up to the first complete marker;
 * when none is complete it keeps back only the longest tail that could still grow into one, so a
 * tag split across deltas is never emitted as text and never lost. No marker may contain another
 * (except as a prefix), which keeps the first-match decision independent of how text is chunked.
 */

export interface MarkerScan {
  /** Text before the marker (or everything that is certainly not part of one). */
  text: string;
  /** The marker found, or null when the scan stopped for lack of input. */
  marker: string | null;
  /** Index just after the consumed text (and marker). */
  next: number;
}

/** Scans `s` from `from` for the earliest of `markers`. With `final`, nothing is held back. */
export function scanToMarker(s: string, from: number, markers: readonly string[], final: boolean): MarkerScan {
  let best = -1;
  let bestMarker: string | null = null;
  for (const m of markers) {
    const at = s.indexOf(m, from);
    if (at !== -1 && (best === -1 || at < best || (at === best && bestMarker !== null && m.length > bestMarker.length))) {
      best = at;
      bestMarker = m;
    }
  }
  if (bestMarker !== null) return { text: s.slice(from, best), marker: bestMarker, next: best + bestMarker.length };
  const hold = final ? 0 : partialMarkerTail(s, from, markers);
  return { text: s.slice(from, s.length - hold), marker: null, next: s.length - hold };
}

/** Length of the longest tail of s[from..] that is a proper prefix of one of `markers`. */
export function partialMarkerTail(s: string, from: number, markers: readonly string[]): number {
  let longest = 0;
  for (const m of markers) {
    const max = Math.min(m.length - 1, s.length - from);
    for (let len = max; len > longest; len--) {
      if (matchesAt(s, s.length - len, m, len)) {
        longest = len;
        break;
      }
    }
  }
  return longest;
}

/** Whether s[at..at+len) equals the first `len` characters of m (no allocation: this runs per delta). */
function matchesAt(s: string, at: number, m: string, len: number): boolean {
  for (let k = 0; k < len; k++) if (s.charCodeAt(at + k) !== m.charCodeAt(k)) return false;
  return true;
}

/** 'yes' when s[from..] starts with `word`, 'maybe' when it is a proper prefix of it, else 'no'. */
export function startsWithWord(s: string, from: number, word: string): 'yes' | 'maybe' | 'no' {
  const avail = s.length - from;
  if (avail >= word.length) return s.startsWith(word, from) ? 'yes' : 'no';
  return word.startsWith(s.slice(from)) ? 'maybe' : 'no';
}

export const isWhitespace = (c: string): boolean => c === ' ' || c === '\n' || c === '\t' || c === '\r';

/** Index of the first non-whitespace character of s at or after `from` (s.length if none). */
export function skipWhitespace(s: string, from: number): number {
  let i = from;
  while (i < s.length && isWhitespace(s[i]!)) i++;
  return i;
}
