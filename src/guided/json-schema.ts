/**
 * JSON schema -> the value specs the JSON frames (json-frames.ts) read.
 *
 * The grammar's language is a subset of the schema's, never larger: every
 * output validates. Where a schema allows more than weft generates, weft picks
 * the narrower form (compact JSON with at most one space after `:` and `,`;
 * only declared properties when an object declares any; for `anyOf`/`oneOf`,
 * the first option that can start with the byte the model chose; numbers of at
 * most 15 digits before and after the point). A keyword that asserts something
 * weft cannot guarantee is refused, so a schema is never silently weakened.
 *
 * The 'python' dialect writes the same values as Python literals (pythonic tool
 * calls): `True`/`False`/`None`, and strings without the `\/` escape, which
 * Python keeps as two characters; the rest of compact JSON is Python already.
 */
import { InvalidOptionError } from '../errors.js';
import { newId } from './text-frames.js';
import { utf8 } from './automaton.js';

/** How values are written: JSON, or Python literals that read back as the same JSON values. */
export type Dialect = 'json' | 'python';

export interface ObjectSpec {
  readonly id: number;
  readonly dialect: Dialect;
  /** Declared properties in order; empty means any key with `additional` values. */
  readonly names: readonly string[];
  readonly keyBytes: readonly Uint8Array[];
  readonly values: ValueSpec[];
  readonly required: readonly boolean[];
  readonly additional: ValueSpec | null;
}

export interface ArraySpec {
  readonly id: number;
  items: ValueSpec;
  readonly minItems: number;
  readonly maxItems: number;
}

export interface StringSpec {
  readonly id: number;
  readonly dialect: Dialect;
  readonly minLength: number;
  readonly maxLength: number;
}

/** A value: every kind it may be (alternatives tried in this order), or a fixed set of JSON texts. */
export interface ValueSpec {
  readonly id: number;
  readonly dialect: Dialect;
  /** enum / const, as compact JSON texts (Python literals in the python dialect). When set, nothing else applies. */
  literals?: readonly Uint8Array[];
  objects: ObjectSpec[];
  arrays: ArraySpec[];
  strings: StringSpec[];
  /** 'integer' or 'number' when numbers are allowed. */
  number?: 'integer' | 'number';
  boolean: boolean;
  null: boolean;
}

const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', '$schema', '$id', '$comment', 'deprecated', 'readOnly', 'writeOnly', '$defs', 'definitions']);
const KNOWN = new Set([...ANNOTATIONS, 'type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', 'anyOf', 'oneOf', 'minItems', 'maxItems', 'minLength', 'maxLength', '$ref']);
const TYPES = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Compiles `schema` (option name `where` for errors). `true` / `{}` is any JSON value. */
export function compileSchema(schema: unknown, where: string, dialect: Dialect = 'json'): ValueSpec {
  const root = schema;
  const refs = new Map<string, ValueSpec>();

  function count(value: unknown, at: string, fallback: number): number {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw new InvalidOptionError(at, 'expected a non-negative integer');
    return value;
  }

  function empty(): ValueSpec {
    return { id: newId(), dialect, objects: [], arrays: [], strings: [], boolean: false, null: false };
  }

  function any(): ValueSpec {
    const spec = empty();
    spec.objects.push({ id: newId(), dialect, names: [], keyBytes: [], values: [], required: [], additional: spec });
    spec.arrays.push({ id: newId(), items: spec, minItems: 0, maxItems: Infinity });
    spec.strings.push({ id: newId(), dialect, minLength: 0, maxLength: Infinity });
    spec.number = 'number';
    spec.boolean = true;
    spec.null = true;
    return spec;
  }

  function resolveRef(ref: unknown, at: string): ValueSpec {
    if (typeof ref !== 'string' || !/^#\/(\$defs|definitions)\/[^/]+$/.test(ref)) throw new InvalidOptionError(at, 'only local refs like "#/$defs/Name" are supported');
    const known = refs.get(ref);
    if (known !== undefined) return known;
    const [, group, name] = ref.split('/') as [string, string, string];
    const target = isObject(root) && isObject(root[group]) ? (root[group] as Record<string, unknown>)[name] : undefined;
    if (target === undefined) throw new InvalidOptionError(at, `${ref} is not defined`);
    // Registered before compiling, so a recursive schema refers to itself.
    const spec = empty();
    refs.set(ref, spec);
    Object.assign(spec, compile(target, at), { id: spec.id });
    return spec;
  }

  function compile(s: unknown, at: string): ValueSpec {
    if (s === true || (isObject(s) && Object.keys(s).every((k) => ANNOTATIONS.has(k)))) return any();
    if (!isObject(s)) throw new InvalidOptionError(at, 'expected a JSON schema object');
    for (const key of Object.keys(s)) {
      if (!KNOWN.has(key)) throw new InvalidOptionError(`${at}.${key}`, `guided generation does not support "${key}" (supported: ${[...KNOWN].filter((k) => !ANNOTATIONS.has(k)).join(', ')})`);
    }
    if (s.$ref !== undefined) return resolveRef(s.$ref, `${at}.$ref`);
    if (s.const !== undefined || s.enum !== undefined) {
      const values = s.const !== undefined ? [s.const] : s.enum;
      if (!Array.isArray(values) || values.length === 0) throw new InvalidOptionError(`${at}.enum`, 'expected a non-empty array');
      const texts = [...new Set(values.map((v) => (dialect === 'python' ? pythonLiteral(v) : JSON.stringify(v))))];
      const spec = empty();
      spec.literals = texts.map(utf8);
      return spec;
    }
    const options = s.anyOf ?? s.oneOf;
    if (options !== undefined) {
      if (!Array.isArray(options) || options.length === 0) throw new InvalidOptionError(`${at}.anyOf`, 'expected a non-empty array');
      const merged = empty();
      options.forEach((option, i) => {
        const spec = compile(option, `${at}.${s.anyOf !== undefined ? 'anyOf' : 'oneOf'}[${i}]`);
        if (spec.literals) {
          // Literals only mix with literals; otherwise take the structural kinds alone.
          if (i === 0 && options.length === 1) Object.assign(merged, { literals: spec.literals });
          else throw new InvalidOptionError(`${at}.anyOf[${i}]`, 'enum/const inside anyOf/oneOf is not supported');
        }
        merged.objects.push(...spec.objects);
        merged.arrays.push(...spec.arrays);
        merged.strings.push(...spec.strings);
        merged.number ??= spec.number;
        if (spec.number === 'number') merged.number = 'number';
        merged.boolean ||= spec.boolean;
        merged.null ||= spec.null;
      });
      return merged;
    }
    const types = s.type === undefined ? TYPES : Array.isArray(s.type) ? s.type : [s.type];
    const spec = empty();
    for (const type of types) {
      if (typeof type !== 'string' || !TYPES.includes(type)) throw new InvalidOptionError(`${at}.type`, `unknown type ${JSON.stringify(type)}`);
      if (type === 'object') spec.objects.push(objectSpec(s, at));
      else if (type === 'array') spec.arrays.push(arraySpec(s, at));
      else if (type === 'string') spec.strings.push({ id: newId(), dialect, minLength: count(s.minLength, `${at}.minLength`, 0), maxLength: count(s.maxLength, `${at}.maxLength`, Infinity) });
      else if (type === 'integer') spec.number = spec.number === 'number' ? 'number' : 'integer';
      else if (type === 'number') spec.number = 'number';
      else if (type === 'boolean') spec.boolean = true;
      else spec.null = true;
    }
    return spec;
  }

  function objectSpec(s: Record<string, unknown>, at: string): ObjectSpec {
    const properties = s.properties ?? {};
    if (!isObject(properties)) throw new InvalidOptionError(`${at}.properties`, 'expected an object');
    const names = Object.keys(properties);
    const required = s.required ?? [];
    if (!Array.isArray(required) || required.some((r) => typeof r !== 'string')) throw new InvalidOptionError(`${at}.required`, 'expected an array of names');
    for (const name of required as string[]) {
      if (!names.includes(name)) throw new InvalidOptionError(`${at}.required`, `"${name}" is required but not among the properties`);
    }
    const additional = s.additionalProperties;
    return {
      id: newId(),
      dialect,
      names,
      // The key as JSON text, closing quote included (so no key is a prefix of another); also a Python string.
      keyBytes: names.map((name) => utf8(JSON.stringify(name).slice(1))),
      values: names.map((name) => compile(properties[name], `${at}.properties.${name}`)),
      required: names.map((name) => (required as string[]).includes(name)),
      // With declared properties only those are generated (a subset of what additionalProperties allows).
      additional: names.length > 0 || additional === false ? null : additional === undefined || additional === true ? any() : compile(additional, `${at}.additionalProperties`),
    };
  }

  function arraySpec(s: Record<string, unknown>, at: string): ArraySpec {
    const minItems = count(s.minItems, `${at}.minItems`, 0);
    const maxItems = count(s.maxItems, `${at}.maxItems`, Infinity);
    if (minItems > maxItems) throw new InvalidOptionError(`${at}.minItems`, 'is above maxItems');
    return { id: newId(), items: s.items === undefined ? any() : compile(s.items, `${at}.items`), minItems, maxItems };
  }

  const spec = compile(schema, where);
  if (!canBeFinite(spec)) throw new InvalidOptionError(where, 'the schema admits no finite value');
  return spec;
}

/** `value` (JSON) as a Python literal that the pythonic parser reads back as `value`. */
export function pythonLiteral(value: unknown): string {
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (Array.isArray(value)) return `[${value.map(pythonLiteral).join(', ')}]`;
  if (typeof value === 'object') return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${pythonLiteral(v)}`).join(', ')}}`;
  // Strings: JSON's escapes (it never writes \/) are Python's; finite numbers read the same.
  return JSON.stringify(value);
}

/** A spec with at least one kind (an empty anyOf result would reject everything). */
function canBeFinite(spec: ValueSpec): boolean {
  return spec.literals !== undefined || spec.objects.length + spec.arrays.length + spec.strings.length > 0 || spec.number !== undefined || spec.boolean || spec.null;
}

/** Any JSON object (response format json_object). */
export function anyObjectSpec(): ValueSpec {
  const spec = compileSchema({ type: 'object' }, 'responseFormat');
  return spec;
}
