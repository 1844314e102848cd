/**
 * JSON schema -> the value specs the JSON frames (json-frames.ts) read.
 *
 * The grammar's language is a subset of the schema's, never larger: every
 * output validates. Where a schema allows more than weft generates, weft picks
 * the narrower form (compact JSON with at most one space after `:` and `,`
 * unless whitespace is 'flexible'; only declared properties when an object
 * declares any, unless undeclaredProperties is 'schema'; numbers of at most 15
 * digits before and after the point, bounded ones without an exponent). Every
 * supported keyword (docs/guided.md's table) is enforced exactly; a JSON
 * Schema keyword weft cannot enforce is refused by name, so a schema is never
 * silently weakened. allOf and $ref siblings are intersected into one schema
 * first (`expand`/`intersect`), then compiled (`compile`).
 *
 * The 'python' dialect writes the same values as Python literals (pythonic tool
 * calls): `True`/`False`/`None`, and strings without the `\/` escape, which
 * Python keeps as two characters; the rest of compact JSON is Python already.
 */
import { InvalidOptionError } from '../errors.js';
import { newId } from './text-frames.js';
import { utf8 } from './automaton.js';
import { FORMATS } from './formats.js';
import { hasNumberBounds, MAX_DIGITS, numberConstraint, reachable, satisfiesValue, type NumberConstraint } from './number-bounds.js';
import { Pattern } from './regex.js';
import type { DisjointContext } from './disjoint.js';
import { exclusiveOptions } from './one-of.js';

/** How values are written: JSON, or Python literals that read back as the same JSON values. */
export type Dialect = 'json' | 'python';
/** 'compact': at most one space after `:` and `,`, none elsewhere; 'flexible': any JSON whitespace (space, tab, CR, LF) between tokens. */
export type Whitespace = 'compact' | 'flexible';
/**
 * Keys of an object that declares properties: 'declared' (the default for generation) writes only
 * declared ones, a subset of the schema's language; 'schema' also allows any other key wherever
 * additionalProperties does (JSON Schema's own language: what a validator accepts).
 */
export type UndeclaredProperties = 'declared' | 'schema';

export interface CompileOptions {
  readonly whitespace?: Whitespace;
  readonly undeclaredProperties?: UndeclaredProperties;
}

export interface ObjectSpec {
  readonly id: number;
  readonly dialect: Dialect;
  /** Declared properties in order; empty means any key with `additional` values. */
  readonly names: readonly string[];
  readonly keyBytes: readonly Uint8Array[];
  readonly values: ValueSpec[];
  readonly required: readonly boolean[];
  readonly additional: ValueSpec | null;
  /** patternProperties' regexes: an undeclared key's value schema depends on which of them it matches. */
  readonly keyPatterns: readonly Pattern[];
  /** By the bit mask of the patterns an undeclared key matches: its value's spec (null: refused); [0] is `additional`. Empty without keyPatterns. */
  readonly patternValues: readonly (ValueSpec | null)[];
  readonly minProperties: number;
  readonly maxProperties: number;
  /**
   * Keys (as keyBytes) of properties whose schema is false, where undeclared keys are free (they
   * are never declared names, so without this a free key could spell one); absent when none.
   */
  readonly banned?: readonly Uint8Array[];
  /** Any JSON whitespace between tokens (whitespace 'flexible'), not just one space after `:` and `,`. */
  readonly flexible: boolean;
}

export interface ArraySpec {
  readonly id: number;
  /** prefixItems (draft 4-7: `items` as an array): the schemas of the first items. */
  readonly prefix: readonly ValueSpec[];
  /** The items after the prefix; null: none (`items: false`, `additionalItems: false`). */
  items: ValueSpec | null;
  readonly minItems: number;
  readonly maxItems: number;
  readonly flexible: boolean;
}

export interface StringSpec {
  readonly id: number;
  readonly dialect: Dialect;
  readonly minLength: number;
  readonly maxLength: number;
  /** `pattern`s and `format`s the string must match (all of them); empty for most strings. */
  readonly patterns: readonly Pattern[];
}

/** Bounded numbers: a value must meet one of the constraints (number-bounds.ts). */
export interface NumberSpec {
  readonly id: number;
  readonly constraints: readonly NumberConstraint[];
}

/** One numeric kind a schema allows, before the kinds of a value are settled: unbounded when `constraint` is null. */
interface NumberKind {
  readonly integer: boolean;
  readonly constraint: NumberConstraint | null;
}

/** A value: every kind it may be (alternatives tried in this order), or a fixed set of JSON texts. */
export interface ValueSpec {
  readonly id: number;
  readonly dialect: Dialect;
  /** enum / const, as compact JSON texts (Python literals in the python dialect). When set, nothing else applies. */
  literals?: readonly Uint8Array[];
  /** enum / const options of an anyOf beside other kinds: written where no other kind starts with the byte. */
  otherLiterals?: readonly Uint8Array[];
  objects: ObjectSpec[];
  arrays: ArraySpec[];
  strings: StringSpec[];
  /** 'integer' or 'number' when numbers are allowed. */
  number?: 'integer' | 'number';
  /** Set when the numbers have bounds (minimum, multipleOf, ...): then only those are written. */
  numberBounds?: NumberSpec;
  /** The numeric kinds `number` and `numberBounds` were settled from (kept for anyOf). */
  numberKinds?: NumberKind[];
  boolean: boolean;
  null: boolean;
}

/** Keywords that assert nothing: annotations (and OpenAPI's / editors' extras); `x-...` too. */
const ANNOTATIONS = new Set([
  'title', 'description', 'default', 'examples', 'example', '$schema', '$id', 'id', '$anchor', '$comment', 'deprecated', 'readOnly', 'writeOnly', '$defs', 'definitions',
  'contentMediaType', 'contentEncoding', 'nullable', 'discriminator', 'markdownDescription', 'enumDescriptions', 'markdownEnumDescriptions', 'deprecationMessage', 'errorMessage', 'defaultSnippets', 'externalDocs', 'xml',
]);
/**
 * JSON Schema's own assertion and applicator keywords (draft 4 to 2020-12) that weft does not
 * enforce: refused by name. A key that is no JSON Schema keyword at all (`x-...`, `_format`, a
 * vendor's) asserts nothing by the specification, so it is read as an annotation.
 */
const UNSUPPORTED = new Set([
  'not', 'if', 'then', 'else', 'contains', 'minContains', 'maxContains', 'dependencies', 'dependentRequired', 'dependentSchemas', 'propertyNames',
  'unevaluatedProperties', 'unevaluatedItems', '$recursiveRef', '$recursiveAnchor', '$dynamicRef', '$dynamicAnchor', 'contentSchema', 'extends', 'disallow', 'divisibleBy',
]);
const isAnnotation = (key: string): boolean => ANNOTATIONS.has(key) || key.startsWith('x-') || (!KNOWN.has(key) && !UNSUPPORTED.has(key));
const KNOWN = new Set([
  'type', 'properties', 'required', 'additionalProperties', 'patternProperties', 'minProperties', 'maxProperties', 'items', 'prefixItems', 'additionalItems', 'minItems', 'maxItems', 'uniqueItems',
  'enum', 'const', 'anyOf', 'oneOf', 'allOf', '$ref', 'minLength', 'maxLength', 'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
]);
const TYPES = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'];

/** Patterns and formats beyond a schema's own `pattern`/`format`, gathered by allOf (symbol keys: never a schema keyword). */
const PATTERNS = Symbol('patterns');
const FORMATS_KEY = Symbol('formats');
type Schema = Record<string | symbol, unknown>;

const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Patterns compiled once per process: schemas repeat them (formats, ids). */
const patternCache = new Map<string, Pattern>();
function compilePattern(source: string, where: string): Pattern {
  let pattern = patternCache.get(source);
  if (pattern === undefined) {
    pattern = Pattern.compile(source, where);
    if (patternCache.size >= 512) patternCache.delete(patternCache.keys().next().value!);
    patternCache.set(source, pattern);
  }
  return pattern;
}

/** How deep allOf / $ref may nest while intersecting (a $ref cycle through allOf is refused, not looped). */
const MAX_MERGE_DEPTH = 24;
/** patternProperties patterns per object: undeclared keys get a value spec per subset of them (2^n). */
const MAX_KEY_PATTERNS = 4;
/** Steps the disjointness proof of one oneOf may take (disjoint.ts): ~tens of ms at most. */
const PROOF_STEPS = 20_000;
/** anyOf options an intersection may multiply into. */
const MAX_DISTRIBUTED = 64;

/**
 * Compiles `schema` (option name `where` for errors). `true` / `{}` is any JSON value.
 *
 * Supported: type (and type arrays), enum, const, properties, required, additionalProperties,
 * minProperties, maxProperties, items, prefixItems (and draft 4-7's items array with
 * additionalItems), minItems, maxItems, uniqueItems false, minLength, maxLength, pattern, format
 * (FORMATS), minimum, maximum, exclusiveMinimum, exclusiveMaximum (draft 4's booleans too),
 * multipleOf, anyOf, oneOf, allOf (intersected keyword by keyword where that is exact), $ref to
 * local JSON pointers and anchors (recursion included), and annotations. Any other keyword is
 * refused with an InvalidOptionError naming it.
 */
export function compileSchema(schema: unknown, where: string, dialect: Dialect = 'json', options: CompileOptions = {}): ValueSpec {
  const flexible = options.whitespace === 'flexible';
  const undeclared = options.undeclaredProperties ?? 'declared';
  const root = schema;
  const refs = new Map<string, ValueSpec>();
  const refIgnoresSiblings = isObject(root) && typeof root.$schema === 'string' && /draft-0[3-7]\b/.test(root.$schema);
  /**
   * Specs made of others (a union of its options, a ref of its target), for the pass after
   * compiling: a recursive ref's spec is still empty when a union inside it copies its kinds.
   */
  const unions: [ValueSpec, ValueSpec[]][] = [];
  let anchors: Map<string, unknown> | undefined;

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
    spec.objects.push({ id: newId(), dialect, names: [], keyBytes: [], values: [], required: [], additional: spec, keyPatterns: [], patternValues: [], minProperties: 0, maxProperties: Infinity, flexible });
    spec.arrays.push({ id: newId(), prefix: [], items: spec, minItems: 0, maxItems: Infinity, flexible });
    spec.strings.push({ id: newId(), dialect, minLength: 0, maxLength: Infinity, patterns: [] });
    spec.number = 'number';
    spec.boolean = true;
    spec.null = true;
    return spec;
  }

  /** The schema a local ref names: `#`, a JSON pointer `#/...` (~0, ~1, %-escapes), or an anchor `#name`. */
  function target(ref: unknown, at: string): unknown {
    if (typeof ref !== 'string' || !ref.startsWith('#')) throw new InvalidOptionError(at, `only local refs ("#/$defs/Name", "#") are supported, not ${JSON.stringify(ref)}`);
    let node: unknown = root;
    if (ref.length > 1 && ref[1] !== '/') {
      anchors ??= collectAnchors(root);
      node = anchors.get(ref.slice(1));
      if (node === undefined) throw new InvalidOptionError(at, `${ref} is not defined`);
      return node;
    }
    for (const raw of ref.slice(2).split('/')) {
      if (ref.length <= 1) break;
      let part: string;
      try {
        part = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
      } catch {
        throw new InvalidOptionError(at, `${ref} is not a valid JSON pointer`);
      }
      node = isObject(node) ? node[part] : Array.isArray(node) && /^\d+$/.test(part) ? node[Number(part)] : undefined;
      if (node === undefined) throw new InvalidOptionError(at, `${ref} is not defined`);
    }
    return node;
  }

  function resolveRef(ref: unknown, at: string): ValueSpec {
    const known = typeof ref === 'string' ? refs.get(ref) : undefined;
    if (known !== undefined) return known;
    const schema = target(ref, at);
    // Registered before compiling, so a recursive schema refers to itself.
    const spec = empty();
    refs.set(ref as string, spec);
    const compiled = compile(schema, at);
    Object.assign(spec, compiled, { id: spec.id });
    unions.push([spec, [compiled]]);
    return spec;
  }

  /** Draft 4's boolean exclusive bounds as numbers, items arrays as prefixItems, $ref with siblings as allOf. */
  function prepare(s: Schema): Schema {
    let out = s;
    const copy = (): Schema => (out === s ? (out = { ...s }) : out);
    for (const [flag, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
      if (typeof s[flag] === 'boolean') {
        const o = copy();
        if (s[flag] === true && s[bound] !== undefined) o[flag] = s[bound];
        if (s[flag] === true) delete o[bound];
        if (s[flag] === false || s[bound] === undefined) delete o[flag];
      }
    }
    if (Array.isArray(s.items)) {
      const o = copy();
      o.prefixItems = s.items;
      if (s.additionalItems !== undefined) o.items = s.additionalItems;
      else delete o.items;
      delete o.additionalItems;
    } else if (s.additionalItems !== undefined) {
      // additionalItems without an items array asserts nothing.
      delete copy().additionalItems;
    }
    if (out.$ref !== undefined && Object.keys(out).some((k) => k !== '$ref' && k !== '$defs' && k !== 'definitions' && !isAnnotation(k))) {
      // Keywords beside a $ref: ignored by drafts 4 to 7 (when the root's $schema names one), applied
      // too from 2019-09 on (and when no draft is named: the stricter reading, a subset of both).
      const { $ref, ...rest } = out;
      out = refIgnoresSiblings ? { $ref } : { allOf: [{ $ref }, rest] };
    }
    return out;
  }

  /** A schema without $ref or allOf at its top (refs followed, allOf intersected), as JSON; false admits nothing. */
  function expand(s: unknown, at: string, depth: number): unknown {
    if (depth > MAX_MERGE_DEPTH) throw new InvalidOptionError(at, `$ref/allOf nest deeper than ${MAX_MERGE_DEPTH} levels (a cycle?)`);
    if (!isObject(s)) return s;
    const p = prepare(s);
    if (p.$ref !== undefined) return expand(target(p.$ref, `${at}.$ref`), at, depth + 1);
    if (p.allOf !== undefined) {
      if (!Array.isArray(p.allOf) || p.allOf.length === 0) throw new InvalidOptionError(`${at}.allOf`, 'expected a non-empty array');
      const { allOf, ...rest } = p;
      let merged: unknown = rest;
      (allOf as unknown[]).forEach((part, i) => {
        merged = intersect(merged, expand(part, `${at}.allOf[${i}]`, depth + 1), `${at}.allOf`, depth + 1);
      });
      return merged;
    }
    return p;
  }

  /** a AND b as one schema, keyword by keyword; refuses (naming the keyword) where that is not exact. */
  function intersect(a0: unknown, b0: unknown, at: string, depth: number): unknown {
    const a = expand(a0, at, depth), b = expand(b0, at, depth);
    if (a === false || b === false) return false;
    // One side asserts nothing: the other as written (a $ref stays a ref, so recursion is compiled once).
    if (a === true || (isObject(a) && Object.keys(a).length === 0)) return b0;
    if (b === true || (isObject(b) && Object.keys(b).length === 0)) return a0;
    if (!isObject(a) || !isObject(b)) throw new InvalidOptionError(at, 'expected JSON schema objects');
    // anyOf / oneOf distribute: (X or Y) and B = (X and B) or (Y and B), exactly one for oneOf.
    for (const [x, y] of [[a, b], [b, a]] as const) {
      const key = x.anyOf !== undefined ? 'anyOf' : x.oneOf !== undefined ? 'oneOf' : undefined;
      if (key === undefined) continue;
      const options = x[key];
      if (!Array.isArray(options)) throw new InvalidOptionError(`${at}.${key}`, 'expected a non-empty array');
      const { [key]: _, ...rest } = x;
      const other = y.anyOf ?? y.oneOf;
      if (Array.isArray(other) && options.length * other.length > MAX_DISTRIBUTED) throw new InvalidOptionError(`${at}.${key}`, `allOf of unions with more than ${MAX_DISTRIBUTED} combinations is not supported`);
      const restAndY = intersect(rest, y, at, depth + 1);
      const merged = options.map((o) => intersect(o, restAndY, at, depth + 1)).filter((o) => o !== false);
      if (merged.length === 0) return false;
      return { [key]: merged };
    }
    const out: Schema = {};
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    const both = (k: string): boolean => a[k] !== undefined && b[k] !== undefined;
    for (const k of keys) {
      if (k === '$defs' || k === 'definitions' || k === 'properties' || k === 'additionalProperties' || k === 'items' || k === 'prefixItems') continue; // the last four below
      const va = a[k], vb = b[k];
      if (!both(k)) {
        out[k] = va ?? vb;
        continue;
      }
      if (isAnnotation(k)) out[k] = va;
      else if (k === 'type') {
        const ta = new Set(Array.isArray(va) ? va : [va]), tb = new Set(Array.isArray(vb) ? vb : [vb]);
        const types = TYPES.filter((t) => (ta.has(t) || (t === 'integer' && ta.has('number'))) && (tb.has(t) || (t === 'integer' && tb.has('number'))));
        if (types.length === 0) return false;
        out.type = types.length === 1 ? types[0] : types;
      } else if (k === 'required') out.required = [...new Set([...(va as string[]), ...(vb as string[])])];
      else if (['minLength', 'minItems', 'minProperties', 'minimum', 'exclusiveMinimum'].includes(k)) out[k] = Math.max(va as number, vb as number);
      else if (['maxLength', 'maxItems', 'maxProperties', 'maximum', 'exclusiveMaximum'].includes(k)) out[k] = Math.min(va as number, vb as number);
      else if (k === 'uniqueItems') out[k] = va === true || vb === true;
      else if (k === 'multipleOf') {
        if (va === vb) out[k] = va;
        else if (Number.isInteger(va) && Number.isInteger(vb)) out[k] = lcmNumber(va as number, vb as number);
        else throw new InvalidOptionError(`${at}.multipleOf`, 'allOf with different fractional multipleOf values is not supported');
      } else if (k === 'enum' || k === 'const') {
        const inB = new Set((k === 'const' ? [vb] : (vb as unknown[])).map(canonical));
        const values = (k === 'const' ? [va] : (va as unknown[])).filter((v) => inB.has(canonical(v)));
        if (values.length === 0) return false;
        out[k] = k === 'const' ? values[0] : values;
      } else if (k === 'pattern' || k === 'format') {
        out[k] = va;
        if (va !== vb) {
          const extra = k === 'pattern' ? PATTERNS : FORMATS_KEY;
          out[extra] = [...((out[extra] as unknown[]) ?? []), vb];
        }
      } else if (JSON.stringify(va) === JSON.stringify(vb)) out[k] = va;
      else throw new InvalidOptionError(`${at}.${k}`, `allOf: cannot intersect two different "${k}" values`);
    }
    for (const extra of [PATTERNS, FORMATS_KEY]) {
      const all = [...((a[extra] as unknown[]) ?? []), ...((b[extra] as unknown[]) ?? []), ...((out[extra] as unknown[]) ?? [])];
      if (all.length > 0) out[extra] = all;
    }
    if ((a.patternProperties !== undefined && (b.properties !== undefined || b.additionalProperties !== undefined || b.patternProperties !== undefined)) || (b.patternProperties !== undefined && (a.properties !== undefined || a.additionalProperties !== undefined))) {
      throw new InvalidOptionError(`${at}.patternProperties`, 'allOf: intersecting patternProperties with other property keywords is not supported');
    }
    // Properties: each key meets both sides' schema for it (its property schema, else additionalProperties).
    if (a.properties !== undefined || b.properties !== undefined || a.additionalProperties !== undefined || b.additionalProperties !== undefined) {
      const pa = (isObject(a.properties) ? a.properties : {}) as Schema, pb = (isObject(b.properties) ? b.properties : {}) as Schema;
      const names = [...new Set([...Object.keys(pa), ...Object.keys(pb)])];
      if (names.length > 0) {
        const properties: Schema = {};
        for (const name of names) properties[name] = intersect(pa[name] ?? a.additionalProperties ?? true, pb[name] ?? b.additionalProperties ?? true, `${at}.properties.${name}`, depth + 1);
        out.properties = properties;
      }
      const additional = intersect(a.additionalProperties ?? true, b.additionalProperties ?? true, `${at}.additionalProperties`, depth + 1);
      if (additional !== true) out.additionalProperties = additional;
    }
    // Items: position by position (prefix items, else items).
    if (a.prefixItems !== undefined || b.prefixItems !== undefined || a.items !== undefined || b.items !== undefined) {
      const fa = (Array.isArray(a.prefixItems) ? a.prefixItems : []) as unknown[], fb = (Array.isArray(b.prefixItems) ? b.prefixItems : []) as unknown[];
      const n = Math.max(fa.length, fb.length);
      if (n > 0) out.prefixItems = Array.from({ length: n }, (_, i) => intersect(fa[i] ?? a.items ?? true, fb[i] ?? b.items ?? true, `${at}.prefixItems[${i}]`, depth + 1));
      const items = intersect(a.items ?? true, b.items ?? true, `${at}.items`, depth + 1);
      if (items !== true) out.items = items;
    }
    return out;
  }

  function compile(s0: unknown, at: string): ValueSpec {
    if (s0 === false) throw new InvalidOptionError(at, 'the schema false admits no value');
    if (s0 === true || (isObject(s0) && Object.keys(s0).every(isAnnotation))) return any();
    if (!isObject(s0)) throw new InvalidOptionError(at, 'expected a JSON schema object');
    const s = prepare(s0);
    if (s.allOf !== undefined) {
      const merged = expand(s, at, 0);
      if (merged === false) throw new InvalidOptionError(`${at}.allOf`, 'the intersection admits no value');
      return compile(merged, at);
    }
    for (const key of Object.keys(s)) {
      if (UNSUPPORTED.has(key)) throw new InvalidOptionError(`${at}.${key}`, `guided generation does not support "${key}" (supported: ${[...KNOWN].join(', ')})`);
    }
    if (s.$ref !== undefined) return resolveRef(s.$ref, `${at}.$ref`);
    if (s.const !== undefined || s.enum !== undefined) {
      const values = s.const !== undefined ? [s.const] : s.enum;
      if (!Array.isArray(values) || values.length === 0) throw new InvalidOptionError(`${at}.enum`, 'expected a non-empty array');
      // Values that break a sibling keyword ({ type: 'string', enum: ['a', 1] }) are left out.
      const { enum: _e, const: _c, ...rest } = s;
      const fitting = values.filter((v) => (s.const === undefined || canonical(v) === canonical(s.const)) && fits(v, rest, 0));
      if (fitting.length === 0) throw new InvalidOptionError(`${at}.enum`, 'no value of enum/const meets the other keywords');
      const texts = [...new Set(fitting.map((v) => (dialect === 'python' ? pythonLiteral(v) : JSON.stringify(v))))];
      const spec = empty();
      spec.literals = texts.map(utf8);
      return spec;
    }
    const unionKey = s.anyOf !== undefined ? 'anyOf' : s.oneOf !== undefined ? 'oneOf' : undefined;
    if (unionKey !== undefined) {
      let options = s[unionKey];
      if (!Array.isArray(options) || options.length === 0) throw new InvalidOptionError(`${at}.${unionKey}`, 'expected a non-empty array');
      const { [unionKey]: _, ...rest } = s;
      // Keywords beside the union (another union among them) apply to every option.
      if (Object.keys(rest).some((k) => !isAnnotation(k) && k !== '$defs' && k !== 'definitions')) {
        options = options.map((o, i) => intersect(o, rest, `${at}.${unionKey}[${i}]`, 0)).filter((o) => o !== false);
        if ((options as unknown[]).length === 0) throw new InvalidOptionError(at, 'no option of the union meets the other keywords');
      }
      // Options read in parallel are "at least one"; oneOf's are made exclusive first, or refused (one-of.ts).
      if (unionKey === 'oneOf') options = exclusiveOptions(options as unknown[], disjointContext(`${at}.oneOf`), `${at}.oneOf`);
      const merged = empty();
      const literals: Uint8Array[] = [];
      let structural = false;
      const parts: ValueSpec[] = [];
      unions.push([merged, parts]);
      (options as unknown[]).forEach((option, i) => {
        const spec = compile(option, `${at}.${unionKey}[${i}]`);
        parts.push(spec);
        if (spec.literals) literals.push(...spec.literals);
        else structural = true;
        if (spec.otherLiterals) literals.push(...spec.otherLiterals);
        merged.objects.push(...spec.objects);
        merged.arrays.push(...spec.arrays);
        merged.strings.push(...spec.strings);
        if (spec.numberKinds) (merged.numberKinds ??= []).push(...spec.numberKinds);
        merged.boolean ||= spec.boolean;
        merged.null ||= spec.null;
      });
      const unique = [...new Map(literals.map((l) => [l.join(','), l])).values()];
      if (!structural) merged.literals = unique;
      else if (unique.length > 0) merged.otherLiterals = unique;
      settleNumbers(merged, at);
      return merged;
    }
    const types = s.type === undefined ? TYPES : Array.isArray(s.type) ? s.type : [s.type];
    const spec = empty();
    for (const type of types) {
      if (typeof type !== 'string' || !TYPES.includes(type)) throw new InvalidOptionError(`${at}.type`, `unknown type ${JSON.stringify(type)}`);
      if (type === 'object') spec.objects.push(objectSpec(s, at));
      else if (type === 'array') spec.arrays.push(arraySpec(s, at));
      else if (type === 'string') spec.strings.push(stringSpec(s, at));
      else if (type === 'integer' || type === 'number') {
        const integer = type === 'integer';
        (spec.numberKinds ??= []).push({ integer, constraint: hasNumberBounds(s) ? numberConstraint(s, integer, at) : null });
      } else if (type === 'boolean') spec.boolean = true;
      else spec.null = true;
    }
    settleNumbers(spec, at);
    return spec;
  }

  function stringSpec(s: Schema, at: string): StringSpec {
    const minLength = count(s.minLength, `${at}.minLength`, 0);
    let maxLength = count(s.maxLength, `${at}.maxLength`, Infinity);
    const patterns: Pattern[] = [];
    for (const source of [s.pattern, ...((s[PATTERNS] as unknown[]) ?? [])]) {
      if (source === undefined) continue;
      if (typeof source !== 'string') throw new InvalidOptionError(`${at}.pattern`, 'expected a string');
      patterns.push(compilePattern(source, `${at}.pattern`));
    }
    for (const name of [s.format, ...((s[FORMATS_KEY] as unknown[]) ?? [])]) {
      if (name === undefined) continue;
      const format = typeof name === 'string' ? FORMATS[name] : undefined;
      if (format === undefined) throw new InvalidOptionError(`${at}.format`, `guided generation does not support format ${JSON.stringify(name)} (supported: ${Object.keys(FORMATS).join(', ')})`);
      patterns.push(compilePattern(format.pattern, `${at}.format`));
      if (format.maxLength !== undefined) maxLength = Math.min(maxLength, format.maxLength);
    }
    if (minLength > maxLength) throw new InvalidOptionError(`${at}.minLength`, 'is above maxLength');
    for (const p of patterns) if (p.minRemaining(p.start) > maxLength) throw new InvalidOptionError(`${at}.pattern`, `${JSON.stringify(p.source)} cannot match within maxLength ${maxLength}`);
    return { id: newId(), dialect, minLength, maxLength, patterns };
  }

  function objectSpec(s: Schema, at: string): ObjectSpec {
    const properties = s.properties ?? {};
    if (!isObject(properties)) throw new InvalidOptionError(`${at}.properties`, 'expected an object');
    const required = s.required ?? [];
    if (!Array.isArray(required) || required.some((r) => typeof r !== 'string')) throw new InvalidOptionError(`${at}.required`, 'expected an array of names');
    // patternProperties: a key meets the schema of every pattern it matches (a declared one too).
    const patternProperties = s.patternProperties ?? {};
    if (!isObject(patternProperties)) throw new InvalidOptionError(`${at}.patternProperties`, 'expected an object');
    const sources = Object.keys(patternProperties);
    if (sources.length > MAX_KEY_PATTERNS) throw new InvalidOptionError(`${at}.patternProperties`, `guided generation supports at most ${MAX_KEY_PATTERNS} patterns in patternProperties`);
    const keyPatterns = sources.map((source) => compilePattern(source, `${at}.patternProperties`));
    const matching = (name: string): unknown[] => sources.filter((source) => nativeTest(source, name)).map((source) => patternProperties[source]);
    const withPatterns = (schema: unknown, name: string, where: string): unknown => matching(name).reduce((acc: unknown, p) => intersect(acc, p, where, 0), schema);
    const additional = s.additionalProperties;
    const schemas: Record<string, unknown> = {};
    for (const name of Object.keys(properties)) schemas[name] = sources.length > 0 ? withPatterns(properties[name], name, `${at}.properties.${name}`) : properties[name];
    // A property whose schema is false may not appear.
    const names = Object.keys(properties).filter((name) => schemas[name] !== false);
    for (const name of new Set(required as string[])) {
      if (names.includes(name)) continue;
      if (name in properties) throw new InvalidOptionError(`${at}.required`, `"${name}" is required but its schema is false`);
      // Required but not declared: an undeclared property, whose schema is its patterns' or additionalProperties'.
      const schema = matching(name).length > 0 ? withPatterns(true, name, `${at}.required`) : (additional ?? true);
      if (schema === false) throw new InvalidOptionError(`${at}.required`, `"${name}" is required but not among the properties (and additionalProperties is false)`);
      names.push(name);
      schemas[name] = schema;
    }
    const minProperties = count(s.minProperties, `${at}.minProperties`, 0);
    const maxProperties = count(s.maxProperties, `${at}.maxProperties`, Infinity);
    const requiredCount = new Set(required as string[]).size;
    if (maxProperties < Math.max(minProperties, requiredCount)) throw new InvalidOptionError(`${at}.maxProperties`, 'is below minProperties or the required properties');
    const freeKeys = (additional !== false || sources.length > 0) && (names.length === 0 || undeclared === 'schema');
    if (!freeKeys && minProperties > names.length) throw new InvalidOptionError(`${at}.minProperties`, names.length === 0 ? 'no property may be written' : `is above the ${names.length} declared properties (weft writes declared properties only)`);
    const additionalSpec = !freeKeys || additional === false ? null : additional === undefined || additional === true ? any() : compile(additional, `${at}.additionalProperties`);
    // Undeclared keys by the patterns they match: mask 0 is additionalProperties, others intersect their patterns' schemas.
    const patternValues: (ValueSpec | null)[] = [];
    if (freeKeys && sources.length > 0) {
      patternValues.push(additionalSpec);
      for (let mask = 1; mask < 1 << sources.length; mask++) {
        const schema = sources.reduce((acc: unknown, source, i) => (mask & (1 << i) ? intersect(acc, patternProperties[source], `${at}.patternProperties`, 0) : acc), true);
        patternValues.push(schema === false ? null : compile(schema, `${at}.patternProperties`));
      }
    }
    const banned = freeKeys ? Object.keys(properties).filter((name) => schemas[name] === false) : [];
    return {
      id: newId(),
      dialect,
      ...(banned.length > 0 ? { banned: banned.map((name) => utf8(JSON.stringify(name).slice(1))) } : {}),
      names,
      // The key as JSON text, closing quote included (so no key is a prefix of another); also a Python string.
      keyBytes: names.map((name) => utf8(JSON.stringify(name).slice(1))),
      values: names.map((name) => compile(schemas[name], `${at}.properties.${name}`)),
      required: names.map((name) => (required as string[]).includes(name)),
      // With declared properties only those are generated (a subset of what additionalProperties
      // allows), unless undeclaredProperties is 'schema'.
      additional: additionalSpec,
      keyPatterns: freeKeys ? keyPatterns : [],
      patternValues,
      minProperties,
      maxProperties,
      flexible,
    };
  }

  function arraySpec(s: Schema, at: string): ArraySpec {
    const minItems = count(s.minItems, `${at}.minItems`, 0);
    let maxItems = count(s.maxItems, `${at}.maxItems`, Infinity);
    if (s.prefixItems !== undefined && !Array.isArray(s.prefixItems)) throw new InvalidOptionError(`${at}.prefixItems`, 'expected an array of schemas');
    const prefixSchemas = (s.prefixItems ?? []) as unknown[];
    const prefix = prefixSchemas.map((item, i) => compile(item, `${at}.prefixItems[${i}]`));
    const items = s.items === false ? null : s.items === undefined ? any() : compile(s.items, `${at}.items`);
    if (items === null) maxItems = Math.min(maxItems, prefix.length);
    if (minItems > maxItems) throw new InvalidOptionError(`${at}.minItems`, items === null ? 'is above the items allowed (items: false)' : 'is above maxItems');
    if (s.uniqueItems === true && maxItems > 1) throw new InvalidOptionError(`${at}.uniqueItems`, 'guided generation does not support "uniqueItems": true (except with maxItems 1)');
    if (s.uniqueItems !== undefined && typeof s.uniqueItems !== 'boolean') throw new InvalidOptionError(`${at}.uniqueItems`, 'expected a boolean');
    return { id: newId(), prefix, items, minItems, maxItems, flexible };
  }

  /** number / numberBounds from the numeric kinds: any unbounded number wins; else the constraints. */
  function settleNumbers(spec: ValueSpec, at: string): void {
    const kinds = spec.numberKinds;
    if (kinds === undefined || kinds.length === 0) return;
    if (kinds.some((k) => !k.integer && k.constraint === null)) spec.number = 'number';
    else if (kinds.every((k) => k.constraint === null)) spec.number = 'integer';
    else {
      const constraints = kinds.map((k) => k.constraint ?? numberConstraint({}, true, at));
      if (!constraints.some((c) => reachable(c, { negative: false, int: '', frac: undefined }))) {
        throw new InvalidOptionError(at, `no number weft writes (at most ${MAX_DIGITS} digits before and after the point) meets the bounds`);
      }
      spec.number = kinds.some((k) => !k.integer) ? 'number' : 'integer';
      spec.numberBounds = { id: newId(), constraints };
    }
  }

  /** What disjoint.ts and one-of.ts need: refs followed and allOf intersected at a schema's top, and exact value checks. */
  function disjointContext(at: string): DisjointContext {
    return { expand: (s: unknown) => expand(s, at, 0), fits: (v: unknown, s: unknown) => fits(v, s, 0), budget: { left: PROOF_STEPS } };
  }

  /** Whether the JSON value `v` meets schema `s` (for enum/const values against their siblings). */
  function fits(v: unknown, s0: unknown, depth: number): boolean {
    const s = expand(s0, 'enum', depth);
    if (s === true || s === undefined) return true;
    if (s === false || !isObject(s)) return false;
    if (s.const !== undefined && canonical(s.const) !== canonical(v)) return false;
    if (Array.isArray(s.enum) && !s.enum.some((e) => canonical(e) === canonical(v))) return false;
    const type = jsonType(v);
    if (s.type !== undefined) {
      const types = Array.isArray(s.type) ? s.type : [s.type];
      if (!types.some((t) => t === type || (t === 'number' && type === 'integer'))) return false;
    }
    if (typeof v === 'string') {
      const length = [...v].length;
      if (typeof s.minLength === 'number' && length < s.minLength) return false;
      if (typeof s.maxLength === 'number' && length > s.maxLength) return false;
      // An enum value is checked by the platform's RegExp: a pattern weft cannot generate from (lookaround) still filters it.
      for (const p of [s.pattern, ...((s[PATTERNS] as unknown[]) ?? [])]) if (typeof p === 'string' && !nativeTest(p, v)) return false;
      for (const f of [s.format, ...((s[FORMATS_KEY] as unknown[]) ?? [])]) if (typeof f === 'string' && FORMATS[f] !== undefined && !compilePattern(FORMATS[f].pattern, 'enum').test(v)) return false;
    }
    if (typeof v === 'number' && hasNumberBounds(s) && !satisfiesValue(numberConstraint(s, false, 'enum'), v)) return false;
    if (Array.isArray(v)) {
      if (typeof s.minItems === 'number' && v.length < s.minItems) return false;
      if (typeof s.maxItems === 'number' && v.length > s.maxItems) return false;
      const prefix = (Array.isArray(s.prefixItems) ? s.prefixItems : []) as unknown[];
      if (!v.every((item, i) => fits(item, i < prefix.length ? prefix[i] : s.items ?? true, depth + 1))) return false;
    }
    if (isObject(v)) {
      const keys = Object.keys(v);
      if (typeof s.minProperties === 'number' && keys.length < s.minProperties) return false;
      if (typeof s.maxProperties === 'number' && keys.length > s.maxProperties) return false;
      if (Array.isArray(s.required) && !s.required.every((k) => typeof k === 'string' && k in v)) return false;
      const properties = (isObject(s.properties) ? s.properties : {}) as Schema;
      const patterns = (isObject(s.patternProperties) ? s.patternProperties : {}) as Schema;
      // A key meets its declared schema and every pattern it matches; additionalProperties only if neither applies.
      const keyFits = (k: string): boolean => {
        const matched = Object.keys(patterns).filter((p) => nativeTest(p, k));
        if (!matched.every((p) => fits(v[k], patterns[p], depth + 1))) return false;
        if (Object.hasOwn(properties, k)) return fits(v[k], properties[k], depth + 1);
        return matched.length > 0 || fits(v[k], s.additionalProperties ?? true, depth + 1);
      };
      if (!keys.every(keyFits)) return false;
    }
    if (Array.isArray(s.anyOf) && !s.anyOf.some((o) => fits(v, o, depth + 1))) return false;
    if (Array.isArray(s.oneOf) && s.oneOf.filter((o) => fits(v, o, depth + 1)).length !== 1) return false;
    return true;
  }

  let spec: ValueSpec;
  try {
    spec = compile(schema, where);
  } catch (error) {
    // A schema too deep for the stack (a pathological one) is a typed error too.
    if (error instanceof RangeError) throw new InvalidOptionError(where, 'the schema nests too deeply to compile');
    throw error;
  }
  // Kinds reach unions that copied a recursive ref's spec before it was compiled.
  for (let changed = true; changed; ) {
    changed = false;
    for (const [merged, parts] of unions) {
      if (merged.literals !== undefined) continue;
      for (const part of parts) {
        for (const kind of ['objects', 'arrays', 'strings'] as const) {
          for (const item of part[kind] as unknown[]) {
            if (!(merged[kind] as unknown[]).includes(item)) {
              (merged[kind] as unknown[]).push(item);
              changed = true;
            }
          }
        }
        for (const kind of part.numberKinds ?? []) {
          if (!(merged.numberKinds ??= []).includes(kind)) {
            merged.numberKinds.push(kind);
            delete merged.number;
            delete merged.numberBounds;
            settleNumbers(merged, where);
            changed = true;
          }
        }
        for (const flag of ['boolean', 'null'] as const) {
          if (part[flag] && !merged[flag]) {
            merged[flag] = true;
            changed = true;
          }
        }
        const texts = part.literals ?? part.otherLiterals;
        if (texts !== undefined && merged !== part) {
          const known = new Set((merged.otherLiterals ?? []).map((l) => l.join(',')));
          const fresh = texts.filter((l) => !known.has(l.join(',')));
          if (fresh.length > 0) {
            merged.otherLiterals = [...(merged.otherLiterals ?? []), ...fresh];
            changed = true;
          }
        }
      }
    }
  }
  if (!canBeFinite(spec)) throw new InvalidOptionError(where, 'the schema admits no finite value');
  return spec;
}

/** `new RegExp(pattern, 'u').test(text)` (without `u` where only that compiles); an invalid pattern fails. */
function nativeTest(pattern: string, text: string): boolean {
  for (const flags of ['u', '']) {
    try {
      return new RegExp(pattern, flags).test(text);
    } catch {
      // next
    }
  }
  throw new InvalidOptionError('pattern', `${JSON.stringify(pattern)} is not a valid ECMAScript regular expression`);
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** JSON text with object keys sorted: equal values, equal texts. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObject(v)) return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

function lcmNumber(a: number, b: number): number {
  const gcd = (x: number, y: number): number => (y === 0 ? x : gcd(y, x % y));
  return (a / gcd(a, b)) * b;
}

/** `$anchor`s (and draft 6-7 `$id: "#name"`) anywhere in the schema. */
function collectAnchors(root: unknown): Map<string, unknown> {
  const anchors = new Map<string, unknown>();
  const visit = (node: unknown, depth: number): void => {
    if (depth > 64) return;
    if (Array.isArray(node)) for (const item of node) visit(item, depth + 1);
    else if (isObject(node)) {
      if (typeof node.$anchor === 'string') anchors.set(node.$anchor, node);
      for (const key of ['$id', 'id']) {
        const id = node[key];
        if (typeof id === 'string' && id.startsWith('#') && id.length > 1) anchors.set(id.slice(1), node);
      }
      for (const value of Object.values(node)) visit(value, depth + 1);
    }
  };
  visit(root, 0);
  return anchors;
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
  return spec.literals !== undefined || spec.otherLiterals !== undefined || spec.objects.length + spec.arrays.length + spec.strings.length > 0 || spec.number !== undefined || spec.boolean || spec.null;
}

/** Any JSON object (response format json_object). */
export function anyObjectSpec(): ValueSpec {
  const spec = compileSchema({ type: 'object' }, 'responseFormat');
  return spec;
}
