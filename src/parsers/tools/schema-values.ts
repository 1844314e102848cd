/**
 * Typing qwen3coder parameter values (raw text between tags) by the JSON schema of the parameter:
 * a string stays a string even when it looks like a number; True/False become booleans only for
 * boolean parameters; objects and arrays are read as JSON, then as Python literals. A value that
 * does not fit its type is kept as the string the model wrote, with a warning.
 */
import type { JsonSchema } from '../../text/types.js';
import { parsePythonLiteral } from '../python-literal.js';

const INTEGER_RE = /^[+-]?\d+$/;
const NUMBER_RE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function typesOf(schema: JsonSchema | undefined): string[] {
  if (!schema) return [];
  if (typeof schema.type === 'string') return [schema.type];
  if (Array.isArray(schema.type)) return schema.type.filter((t): t is string => typeof t === 'string');
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every((e) => typeof e === 'string')) return ['string'];
  return [];
}

/** Whether the value can be streamed character by character as a JSON string. */
export function streamsAsString(schema: JsonSchema | undefined): boolean {
  const types = typesOf(schema);
  return types.length === 1 && types[0] === 'string';
}

export interface ConvertedValue {
  value: unknown;
  warning?: string;
}

/** Converts a parameter's text (one leading and trailing newline already removed). */
export function convertParameter(text: string, schema: JsonSchema | undefined): ConvertedValue {
  const types = typesOf(schema);
  const trimmed = text.trim();
  if (types.length === 0) {
    if (Array.isArray(schema?.enum)) {
      const match = schema.enum.find((e) => String(e) === trimmed);
      if (match !== undefined) return { value: match };
    }
    return { value: bestEffort(text) };
  }
  if (types.includes('null') && (trimmed === 'null' || trimmed === 'None')) return { value: null };
  // A string always fits, so it is tried last.
  for (const type of types) {
    if (type === 'string' || type === 'null') continue;
    const converted = convertTo(type, trimmed);
    if (converted.ok) return { value: converted.value };
  }
  if (types.includes('string')) return { value: text };
  return { value: text, warning: `${JSON.stringify(preview(trimmed))} is not a valid ${types.join(' or ')}; kept as a string` };
}

function convertTo(type: string, text: string): { ok: true; value: unknown } | { ok: false } {
  switch (type) {
    case 'integer': {
      if (INTEGER_RE.test(text)) return { ok: true, value: Number(text) };
      const n = NUMBER_RE.test(text) ? Number(text) : NaN;
      return Number.isInteger(n) ? { ok: true, value: n } : { ok: false };
    }
    case 'number':
      return NUMBER_RE.test(text) ? { ok: true, value: Number(text) } : { ok: false };
    case 'boolean':
      if (text === 'true' || text === 'True') return { ok: true, value: true };
      if (text === 'false' || text === 'False') return { ok: true, value: false };
      return { ok: false };
    case 'object':
    case 'array': {
      const value = parseStructured(text);
      const fits = type === 'array' ? Array.isArray(value) : typeof value === 'object' && value !== null && !Array.isArray(value);
      return fits ? { ok: true, value } : { ok: false };
    }
    default:
      return { ok: false };
  }
}

function parseStructured(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const literal = parsePythonLiteral(text);
    return literal.ok ? literal.value : undefined;
  }
}

/** A parameter the schema does not describe: JSON when it is JSON, else the text. */
function bestEffort(text: string): unknown {
  try {
    return JSON.parse(text.trim());
  } catch {
    return text;
  }
}

function preview(text: string): string {
  return text.length > 40 ? text.slice(0, 37) + '...' : text;
}
