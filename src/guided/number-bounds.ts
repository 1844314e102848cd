/**
 * Exact numeric bounds for guided numbers: `minimum`, `maximum`,
 * `exclusiveMinimum`, `exclusiveMaximum` (draft 4's boolean form too) and
 * `multipleOf`, for integers and numbers.
 *
 * A bounded number is written as `-?int(.frac)?` with at most MAX_DIGITS
 * digits on each side (no exponent), so every value is an integer count of
 * units of 10^-MAX_DIGITS: all arithmetic is BigInt, with no rounding. A
 * bound or multipleOf is read as the decimal its shortest JavaScript spelling
 * writes (`0.1` is exactly one tenth), which is also what a validator that
 * parses the JSON as doubles compares for numbers of at most 15 significant
 * digits.
 *
 * A number frame (json-frames.ts) takes a digit only if some completion of
 * what it has read satisfies one of the constraints, and ends only on a value
 * that does: masks never lead into a number that cannot be finished.
 */
import { InvalidOptionError } from '../errors.js';

export const MAX_DIGITS = 15;
const UNIT = 10n ** BigInt(MAX_DIGITS);

/** One set of bounds a number may satisfy (anyOf makes several). Values in units of 10^-MAX_DIGITS. */
export interface NumberConstraint {
  /** No fraction may be written (type integer). */
  readonly integer: boolean;
  readonly low: bigint | null;
  readonly high: bigint | null;
  /** The value is a multiple of this (units); integers: a multiple of UNIT at least. */
  readonly step: bigint | null;
}

/** A decimal as mantissa x 10^exponent, from a finite double's shortest spelling. */
function decimal(value: number): { mantissa: bigint; exponent: number } {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(value))!;
  const digits = m[2]! + (m[3] ?? '');
  return { mantissa: BigInt(m[1] + digits), exponent: Number(m[4] ?? 0) - (m[3]?.length ?? 0) };
}

/** value x 10^MAX_DIGITS rounded down ('floor') or up ('ceil'), and whether it was exact. */
function toUnits(value: number, round: 'floor' | 'ceil'): { units: bigint; exact: boolean } {
  const { mantissa, exponent } = decimal(value);
  const shift = exponent + MAX_DIGITS;
  if (shift >= 0) return { units: mantissa * 10n ** BigInt(shift), exact: true };
  const d = 10n ** BigInt(-shift);
  let q = mantissa / d; // truncates toward zero
  const exact = q * d === mantissa;
  if (!exact && round === 'floor' && mantissa < 0n) q -= 1n;
  if (!exact && round === 'ceil' && mantissa > 0n) q += 1n;
  return { units: q, exact };
}

const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? a : gcd(b, a % b));
const lcm = (a: bigint, b: bigint): bigint => (a / gcd(a, b)) * b;

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Whether a schema has any numeric keyword. */
export function hasNumberBounds(s: Record<string, unknown>): boolean {
  return s.minimum !== undefined || s.maximum !== undefined || s.exclusiveMinimum !== undefined || s.exclusiveMaximum !== undefined || s.multipleOf !== undefined;
}

/** The constraint of one schema's numeric keywords (already normalised: exclusive bounds are numbers). */
export function numberConstraint(s: Record<string, unknown>, integer: boolean, at: string): NumberConstraint {
  const num = (key: string): number | undefined => {
    const v = s[key];
    if (v === undefined) return undefined;
    if (!isNumber(v)) throw new InvalidOptionError(`${at}.${key}`, 'expected a finite number');
    return v;
  };
  let low: bigint | null = null;
  let high: bigint | null = null;
  const raise = (v: bigint): void => void (low = low === null || v > low ? v : low);
  const lower = (v: bigint): void => void (high = high === null || v < high ? v : high);
  const minimum = num('minimum'), maximum = num('maximum'), exclusiveMinimum = num('exclusiveMinimum'), exclusiveMaximum = num('exclusiveMaximum');
  if (minimum !== undefined) raise(toUnits(minimum, 'ceil').units);
  if (exclusiveMinimum !== undefined) {
    // The least unit count above the bound: floor + 1, whether the bound is a whole count or not.
    raise(toUnits(exclusiveMinimum, 'floor').units + 1n);
  }
  if (maximum !== undefined) lower(toUnits(maximum, 'floor').units);
  if (exclusiveMaximum !== undefined) {
    lower(toUnits(exclusiveMaximum, 'ceil').units - 1n);
  }
  let step: bigint | null = integer ? UNIT : null;
  const multipleOf = num('multipleOf');
  if (multipleOf !== undefined) {
    if (multipleOf <= 0) throw new InvalidOptionError(`${at}.multipleOf`, 'expected a number above 0');
    const { units, exact } = toUnits(multipleOf, 'floor');
    if (!exact || units === 0n) throw new InvalidOptionError(`${at}.multipleOf`, `guided generation supports multipleOf with at most ${MAX_DIGITS} decimals`);
    step = step === null ? units : lcm(step, units);
  }
  return { integer, low, high, step };
}

/** Whether some multiple of c.step (or any unit) lies in [a, b] within c's bounds. */
function meets(c: NumberConstraint, a: bigint, b: bigint): boolean {
  const lo = c.low !== null && c.low > a ? c.low : a;
  const hi = c.high !== null && c.high < b ? c.high : b;
  if (lo > hi) return false;
  if (c.step === null) return true;
  // The smallest multiple >= lo.
  let q = lo / c.step;
  if (q * c.step < lo) q += 1n;
  return q * c.step <= hi;
}

/** What a bounded number frame has read: sign, integer digits, and the fraction once a point is read. */
export interface NumberText {
  readonly negative: boolean;
  readonly int: string;
  /** undefined before the point; '' right after it. */
  readonly frac: string | undefined;
}

/** Whether some completion of `t` (more digits, a point, a fraction) satisfies `c`. */
export function reachable(c: NumberConstraint, t: NumberText): boolean {
  const sign = (a: bigint, b: bigint): boolean => (t.negative ? meets(c, -b, -a) : meets(c, a, b));
  if (t.frac !== undefined) {
    if (c.integer) return false;
    const room = BigInt(MAX_DIGITS - t.frac.length);
    const base = BigInt(t.int) * UNIT + BigInt(t.frac || '0') * 10n ** room;
    return sign(base, base + 10n ** room - 1n);
  }
  if (t.int === '') {
    const top = 10n ** BigInt(MAX_DIGITS) * UNIT - 1n;
    return t.negative ? meets(c, -top, 0n) : meets(c, -top, top);
  }
  const d = BigInt(t.int);
  const more = t.int === '0' ? 0 : MAX_DIGITS - t.int.length;
  for (let j = 0; j <= more; j++) {
    const scale = 10n ** BigInt(j);
    const a = d * scale * UNIT;
    // Integers: the last integer of that many digits; numbers: a fraction may follow.
    const b = c.integer ? (d * scale + scale - 1n) * UNIT : (d + 1n) * scale * UNIT - 1n;
    if (sign(a, b)) return true;
  }
  return false;
}

/** Whether `t` as written now is a value that satisfies `c`. */
export function satisfied(c: NumberConstraint, t: NumberText): boolean {
  if (t.int === '' || t.frac === '') return false;
  if (t.frac !== undefined && c.integer) return false;
  const frac = t.frac ?? '';
  let v = BigInt(t.int) * UNIT + BigInt(frac || '0') * 10n ** BigInt(MAX_DIGITS - frac.length);
  if (t.negative) v = -v;
  return meets(c, v, v);
}

/** Whether the JSON number `v` meets `c` (an enum value against its siblings). */
export function satisfiesValue(c: NumberConstraint, v: number): boolean {
  if (!Number.isFinite(v)) return false;
  const floor = toUnits(v, 'floor');
  if (!floor.exact) return false;
  if (c.integer && !Number.isInteger(v)) return false;
  return meets(c, floor.units, floor.units);
}
