/**
 * Caller data that a chat template or a parser will read (tool definitions,
 * template kwargs, tool-call arguments), copied as plain JSON data.
 *
 * Callers pass what their framework built: AI-SDK-style tool objects carry an
 * `execute` function, schemas may be generated, deeply nested or circular.
 * The copy follows JSON.stringify's rules for what it keeps (functions and
 * undefined values in objects are left out, toJSON is honoured), and turns
 * everything JSON cannot say (cycles, bigints, nesting past MAX_DEPTH, a
 * function where a value must be) into an InvalidOptionError naming the place,
 * so no template or parser ever meets it (a stack overflow, DataCloneError).
 */

import { InvalidOptionError } from '../errors.js';

/** Deeper than any real schema; far below what would exhaust the stack. */
export const MAX_DEPTH = 64;

export function toJsonData(value: unknown, at: string): unknown {
  return copy(value, at, 0, new Set());
}

function copy(value: unknown, at: string, depth: number, ancestors: Set<object>): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new InvalidOptionError(at, `${value} is not a JSON number`);
    return value;
  }
  if (typeof value !== 'object') throw new InvalidOptionError(at, `a ${typeof value} is not JSON data`);
  if (depth >= MAX_DEPTH) throw new InvalidOptionError(at, `nested more than ${MAX_DEPTH} levels deep`);
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return copy(toJSON.call(value), at, depth, ancestors);
  if (ancestors.has(value)) throw new InvalidOptionError(at, 'is circular (it contains itself)');
  ancestors.add(value);
  try {
    if (Array.isArray(value)) return Array.from(value, (item, i) => copy(item, `${at}[${i}]`, depth + 1, ancestors));
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      out[key] = copy(item, `${at}.${key}`, depth + 1, ancestors);
    }
    return out;
  } finally {
    ancestors.delete(value);
  }
}
