/**
 * Typing qwen3coder parameter values (raw text between tags) by the JSON schema of the parameter.
 *
 * The schema's types are read in the order declared, from `type` (a name or a list), or from the
 * options of `anyOf` / `oneOf` (each option's type, or a string enum), and the first type the text
 * fits wins: a string always fits, so `["string", "integer"]` keeps "42" a string while
 * `["integer", "string"]` makes it 42. When the schema admits null, `null` / `None` (any case) is
 * null. Type names are normalised the way vLLM does (`int`, `float`, `bool`, `dict`, `list`, ...).
 * objects and arrays are read as JSON, then as Python literals (and a JSON string that holds an
 * object is decoded once more); an unknown type name is read best-effort. A value that does not fit
 * any declared type is kept as the string the model wrote, with a warning.
 */
import type { JsonSchema } from '../../text/types.js';
import { parsePythonLiteral } from '../../parsers/python-literal.js';

const INTEGER_RE = /^[+-]?\d+$/;
const NUMBER_RE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

type Kind = 'string' | 'integer' | 'number' | 'boolean' | 'null' | 'object' | 'array' | 'unknown';

/** Maps a schema type name (as models' tool schemas spell it) to the kind of value it asks for. */
function kindOf(typeName: string): Kind {
  const t = typeName.trim().toLowerCase();
  if (t === 'string' || t === 'str' || t === 'text' || t === 'varchar' || t === 'char' || t === 'enum') return 'string';
  if (t === 'null') return 'null';
  if (t.startsWith('int') || t.startsWith('uint') || t.startsWith('long') || t.startsWith('short') || t.startsWith('unsigned')) return 'integer';
  if (t.startsWith('num') || t.startsWith('float') || t === 'double') return 'number';
  if (t === 'boolean' || t === 'bool' || t === 'binary') return 'boolean';
  if (t === 'object' || t.startsWith('dict')) return 'object';
  if (t === 'array' || t === 'arr' || t.startsWith('list')) return 'array';
  return 'unknown';
}

const isStringEnum = (schema: JsonSchema): boolean =>
  Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every((e) => typeof e === 'string');

/** The kinds a schema admits, in declared order (empty when it says nothing about the type). */
function kindsOf(schema: JsonSchema | undefined): Kind[] {
  if (!schema || typeof schema !== 'object') return [];
  if (typeof schema.type === 'string') return [kindOf(schema.type)];
  if (Array.isArray(schema.type)) return schema.type.filter((t): t is string => typeof t === 'string').map(kindOf);
  const options = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : null;
  if (options) return options.flatMap((option) => kindsOf(option as JsonSchema));
  if (isStringEnum(schema)) return ['string'];
  return [];
}

/** Whether the value can be streamed character by character as a JSON string. */
export function streamsAsString(schema: JsonSchema | undefined): boolean {
  const kinds = kindsOf(schema);
  return kinds.length === 1 && kinds[0] === 'string';
}

export interface ConvertedValue {
  value: unknown;
  warning?: string;
}

/** Converts a parameter's text (one leading and trailing newline already removed). */
export function convertParameter(text: string, schema: JsonSchema | undefined): ConvertedValue {
  const kinds = kindsOf(schema);
  const trimmed = text.trim();
  if (kinds.length === 0) {
    if (Array.isArray(schema?.enum)) {
      const match = schema.enum.find((e) => String(e) === trimmed);
      if (match !== undefined) return { value: match };
    }
    return { value: bestEffort(text) };
  }
  if (kinds.includes('null') && /^(?:null|none)$/i.test(trimmed)) return { value: null };
  for (const kind of kinds) {
    if (kind === 'string') return { value: text };
    if (kind === 'unknown') return { value: bestEffort(text) };
    const converted = convertTo(kind, trimmed);
    if (converted.ok) return { value: converted.value };
  }
  const declared = kinds.filter((k) => k !== 'null').join(' or ');
  return { value: text, warning: `${JSON.stringify(preview(trimmed))} is not a valid ${declared}; kept as a string` };
}

function convertTo(kind: Kind, text: string): { ok: true; value: unknown } | { ok: false } {
  switch (kind) {
    case 'integer': {
      if (INTEGER_RE.test(text)) return { ok: true, value: Number(text) };
      const n = NUMBER_RE.test(text) ? Number(text) : NaN;
      return Number.isInteger(n) ? { ok: true, value: n } : { ok: false };
    }
    case 'number':
      return NUMBER_RE.test(text) ? { ok: true, value: Number(text) } : { ok: false };
    case 'boolean': {
      const lower = text.toLowerCase();
      if (lower === 'true') return { ok: true, value: true };
      if (lower === 'false') return { ok: true, value: false };
      return { ok: false };
    }
    case 'object':
    case 'array': {
      const value = parseStructured(text);
      const fits = kind === 'array' ? Array.isArray(value) : typeof value === 'object' && value !== null && !Array.isArray(value);
      return fits ? { ok: true, value } : { ok: false };
    }
    default:
      return { ok: false };
  }
}

/** JSON, else a Python literal; a JSON string holding a container (a doubly encoded value) is decoded once more. */
function parseStructured(text: string): unknown {
  const value = parseLiteral(text);
  if (typeof value === 'string') {
    const inner = parseLiteral(value);
    if (typeof inner === 'object' && inner !== null) return inner;
  }
  return value;
}

function parseLiteral(text: string): unknown {
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
