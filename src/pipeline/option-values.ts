/**
 * Checks for option values, each failing with an InvalidOptionError that names
 * the option and says what it expects: known keys (a misspelt key names the
 * closest known one), integers and numbers in a written range, byte sizes.
 */

import { InvalidOptionError } from '../errors.js';

/** An interval: `[0, 1]`, or `(0, 1]` with `minExclusive`. An infinite end is left open. */
export interface Range {
  readonly min: number;
  readonly max: number;
  readonly minExclusive?: boolean;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `value` must be a plain object (or undefined); `name` is its option path. */
export function checkObject(name: string, value: unknown): void {
  if (value !== undefined && !isObject(value)) throw new InvalidOptionError(name, 'expected an object');
}

/**
 * Every own key of `value` must be one of `known`. A misspelt key (`maxToken`)
 * would otherwise be ignored without a word, so the error names the closest
 * known key, or lists them all when none is close.
 */
export function checkKeys(path: string | undefined, value: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const name = path === undefined ? key : `${path}.${key}`;
    const closest = closestKey(key, known);
    const hint = closest === undefined ? `known: ${known.join(', ')}` : `did you mean "${closest}"?`;
    throw new InvalidOptionError(name, `unknown option (${hint})`);
  }
}

/** The known key nearest to `key` by edit distance, if it is near enough to be a likely misspelling. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = levenshtein(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  // A third of the longer name may be wrong: "sise" -> "size", "kvcache" -> "kvCache", not "x" -> "seed".
  return best !== undefined && bestDistance <= Math.max(1, Math.floor(Math.max(key.length, best.length) / 3)) ? best : undefined;
}

/** Edits (insert, delete, substitute) that turn `a` into `b`. */
export function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitute = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitute));
    }
    previous = current;
  }
  return previous[b.length]!;
}

export function integer(name: string, value: unknown, fallback: number, range: Range): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || !inRange(value, range)) {
    throw new InvalidOptionError(name, `expected an integer${describeRange(range)}, got ${show(value)}`);
  }
  return value;
}

export function number(name: string, value: unknown, fallback: number, range: Range): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || !inRange(value, range)) {
    throw new InvalidOptionError(name, `expected a number${describeRange(range)}, got ${show(value)}`);
  }
  return value;
}

export function boolean(name: string, value: unknown): boolean | undefined {
  if (value !== undefined && typeof value !== 'boolean') throw new InvalidOptionError(name, `expected true or false, got ${show(value)}`);
  return value;
}

function inRange(value: number, range: Range): boolean {
  return (range.minExclusive === true ? value > range.min : value >= range.min) && value <= range.max;
}

/** " in (0, 1]", " >= 1", or "" for any finite number. */
export function describeRange(range: Range): string {
  const lowOpen = range.min === -Infinity || range.min <= -Number.MAX_VALUE;
  const highOpen = range.max === Infinity || range.max >= Number.MAX_VALUE;
  if (lowOpen && highOpen) return '';
  if (highOpen) return range.minExclusive === true ? ` > ${range.min}` : ` >= ${range.min}`;
  if (lowOpen) return ` <= ${range.max}`;
  return ` in ${range.minExclusive === true ? '(' : '['}${range.min}, ${range.max}]`;
}

function show(value: unknown): string {
  if (typeof value === 'number') return String(value); // JSON.stringify(NaN) says null
  return JSON.stringify(value) ?? String(value);
}

const UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** Parses "4GB", "512 MiB", "1.5gb" or a number of bytes. Returns undefined if malformed. */
export function parseByteSize(size: string | number): number | undefined {
  if (typeof size === 'number') return Number.isFinite(size) && Math.floor(size) > 0 ? Math.floor(size) : undefined;
  if (typeof size !== 'string') return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(size);
  if (match === null) return undefined;
  const unit = UNITS[(match[2] || 'b').toLowerCase()];
  if (unit === undefined) return undefined;
  const bytes = Math.floor(Number(match[1]) * unit);
  return bytes > 0 ? bytes : undefined;
}
