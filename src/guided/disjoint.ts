/**
 * Whether two JSON schemas can be proved to share no value: what makes a `oneOf` exact.
 *
 * `oneOf` means "exactly one option matches". weft's automaton reads options in parallel, as
 * `anyOf`, and cannot exclude a value that matches two; so a `oneOf` is compiled only when its
 * options are pairwise disjoint (then "exactly one" and "at least one" are the same language)
 * and refused by name otherwise (json-schema.ts).
 *
 * The proof is conservative: `true` means no value meets both schemas; `false` means "not
 * proved" (they may overlap, or the rules below cannot tell). Rules:
 * - `false` on either side; enum/const values, each checked against the other side (`fits`);
 * - the JSON types either side admits do not meet (integer is a number);
 * - for each type both admit, a reason on that type: numbers in disjoint ranges; strings whose
 *   length ranges do not meet (or one allows only "" and the other's pattern refuses it); arrays whose length ranges do not meet or whose item at an index
 *   every value has is disjoint; objects whose property counts do not meet, or a property
 *   required on one side whose schemas on the two sides are disjoint (a discriminator: distinct
 *   `const`/`enum`, different types, or one side's `additionalProperties: false` without it);
 * - a union side: every option disjoint from the other side, or its sibling keywords are.
 */

type Schema = Record<string | symbol, unknown>;
const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What the proof needs from the compiler: a schema's top with refs followed and allOf intersected, and exact value checks. */
export interface DisjointContext {
  /** `s` without `$ref`/`allOf` at its top; throws where the compiler would. */
  expand(s: unknown): unknown;
  /** Whether the JSON value `v` meets `s` (exact over the keywords weft compiles). */
  fits(v: unknown, s: unknown): boolean;
  /**
   * Proof steps left, shared by every pair of one oneOf: a pathological schema (unions of unions
   * of deep objects) runs out and is "not proved", so refused, in bounded time.
   */
  budget: { left: number };
}

/** How deep the proof follows properties and items before it gives up (answers "not proved"). */
const MAX_DEPTH = 12;

/** The JSON types a value may have, with numbers split into integers and fractions (a number that is not an integer). */
const ATOMS = ['object', 'array', 'string', 'integer', 'fraction', 'boolean', 'null'] as const;
type Atom = (typeof ATOMS)[number];

function atomsOf(s: Schema): Set<Atom> {
  if (s.type === undefined) return new Set(ATOMS);
  const out = new Set<Atom>();
  for (const t of Array.isArray(s.type) ? s.type : [s.type]) {
    if (t === 'number') out.add('integer').add('fraction');
    else if (ATOMS.includes(t as Atom)) out.add(t as Atom);
  }
  return out;
}

/** An interval of reals, each end open or closed (Infinity: unbounded). */
interface Range {
  low: number;
  lowOpen: boolean;
  high: number;
  highOpen: boolean;
}

function apart(a: Range, b: Range): boolean {
  const below = (x: Range, y: Range): boolean => x.high < y.low || (x.high === y.low && (x.highOpen || y.lowOpen));
  return below(a, b) || below(b, a);
}

/** The range a schema's numeric bounds allow (draft 4's boolean exclusive bounds are numbers by now: json-schema.ts's prepare). */
function numberRange(s: Schema): Range {
  const r: Range = { low: -Infinity, lowOpen: false, high: Infinity, highOpen: false };
  if (typeof s.minimum === 'number' && s.minimum > r.low) [r.low, r.lowOpen] = [s.minimum, false];
  if (typeof s.exclusiveMinimum === 'number' && s.exclusiveMinimum >= r.low) [r.low, r.lowOpen] = [s.exclusiveMinimum, true];
  if (typeof s.maximum === 'number' && s.maximum < r.high) [r.high, r.highOpen] = [s.maximum, false];
  if (typeof s.exclusiveMaximum === 'number' && s.exclusiveMaximum <= r.high) [r.high, r.highOpen] = [s.exclusiveMaximum, true];
  return r;
}

/** A closed range of counts from a min/max keyword pair. */
function counts(s: Schema, min: string, max: string, maxDefault = Infinity): Range {
  const low = typeof s[min] === 'number' ? (s[min] as number) : 0;
  const high = typeof s[max] === 'number' ? Math.min(s[max] as number, maxDefault) : maxDefault;
  return { low, lowOpen: false, high, highOpen: false };
}

/** The schema a property `key` of an object meets under `s` (true where the proof cannot narrow it). */
function propertySchema(s: Schema, key: string): unknown {
  const properties = isObject(s.properties) ? s.properties : {};
  if (Object.hasOwn(properties, key)) return properties[key];
  // A key that may match a patternProperties pattern meets that pattern's schema too; "any" is a sound superset.
  if (isObject(s.patternProperties) && Object.keys(s.patternProperties).length > 0) return true;
  return s.additionalProperties ?? true;
}

/** The schema item `i` of an array meets under `s` (after prepare: prefixItems, then items). */
function itemSchema(s: Schema, i: number): unknown {
  const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
  return i < prefix.length ? prefix[i] : s.items ?? true;
}

function maxItems(s: Schema): number {
  const prefix = Array.isArray(s.prefixItems) ? s.prefixItems.length : 0;
  return s.items === false ? prefix : Infinity;
}

/** No value of type `atom` meets both `a` and `b` (both admit the type). */
function disjointAs(atom: Atom, a: Schema, b: Schema, context: DisjointContext, depth: number): boolean {
  switch (atom) {
    case 'integer':
    case 'fraction':
      return apart(numberRange(a), numberRange(b));
    case 'string': {
      if (apart(counts(a, 'minLength', 'maxLength'), counts(b, 'minLength', 'maxLength'))) return true;
      // A side whose only string is "" (maxLength 0): disjoint when "" fails either side's patterns or formats.
      if (a.maxLength === 0 || b.maxLength === 0) {
        try {
          return !context.fits('', a) || !context.fits('', b);
        } catch {
          return false;
        }
      }
      return false;
    }
    case 'array': {
      if (apart(counts(a, 'minItems', 'maxItems', maxItems(a)), counts(b, 'minItems', 'maxItems', maxItems(b)))) return true;
      // Item i exists in every value both admit when either side requires that many items.
      const present = Math.min(Math.max(counts(a, 'minItems', 'maxItems').low, counts(b, 'minItems', 'maxItems').low), 64);
      for (let i = 0; i < present; i++) if (disjointAt(itemSchema(a, i), itemSchema(b, i), context, depth + 1)) return true;
      return false;
    }
    case 'object': {
      if (apart(counts(a, 'minProperties', 'maxProperties'), counts(b, 'minProperties', 'maxProperties'))) return true;
      const required = new Set([...(Array.isArray(a.required) ? a.required : []), ...(Array.isArray(b.required) ? b.required : [])].filter((k): k is string => typeof k === 'string'));
      for (const key of required) if (disjointAt(propertySchema(a, key), propertySchema(b, key), context, depth + 1)) return true;
      return false;
    }
    default:
      // true and false, null: only enum/const tell them apart, checked before.
      return false;
  }
}

function disjointAt(a0: unknown, b0: unknown, context: DisjointContext, depth: number): boolean {
  if (depth > MAX_DEPTH || --context.budget.left < 0) return false;
  let a: unknown, b: unknown;
  try {
    a = context.expand(a0);
    b = context.expand(b0);
  } catch {
    return false; // a schema the compiler refuses is never proved anything
  }
  if (a === false || b === false) return true;
  if (!isObject(a) || !isObject(b)) return false;
  // Enumerated values: disjoint when none of them meets both sides.
  for (const [x, y] of [[a, b], [b, a]] as const) {
    const values = x.const !== undefined ? [x.const] : Array.isArray(x.enum) ? x.enum : undefined;
    if (values !== undefined) {
      try {
        return values.every((v) => !context.fits(v, x) || !context.fits(v, y));
      } catch {
        return false;
      }
    }
  }
  // A union is a superset of none of its parts: each option disjoint, or the keywords beside it.
  for (const [x, y] of [[a, b], [b, a]] as const) {
    const key = Array.isArray(x.anyOf) ? 'anyOf' : Array.isArray(x.oneOf) ? 'oneOf' : undefined;
    if (key === undefined) continue;
    const { [key]: options, ...rest } = x;
    if ((options as unknown[]).every((o) => disjointAt(o, y, context, depth + 1))) return true;
    return Object.keys(rest).length > 0 && disjointAt(rest, y, context, depth + 1);
  }
  const atomsB = atomsOf(b);
  return [...atomsOf(a)].filter((t) => atomsB.has(t)).every((t) => disjointAs(t, a, b, context, depth));
}

/**
 * The `type` names on which `a` is provably disjoint from `b`: restricting `a` to them
 * (`{ type: [...] }`) makes the two disjoint. Empty when the proof finds none (or `a` or `b` is a
 * union or an enumeration, which the proof above treats as a whole).
 */
export function typesApart(a0: unknown, b0: unknown, context: DisjointContext): string[] {
  let a: unknown, b: unknown;
  try {
    [a, b] = [context.expand(a0), context.expand(b0)];
  } catch {
    return [];
  }
  if (!isObject(a) || !isObject(b)) return [];
  for (const s of [a, b]) if (s.const !== undefined || s.enum !== undefined || s.anyOf !== undefined || s.oneOf !== undefined) return [];
  const atomsB = atomsOf(b);
  const apartAtoms = new Set([...atomsOf(a)].filter((t) => !atomsB.has(t) || disjointAs(t, a, b, context, 0)));
  const names: string[] = [];
  for (const t of ['object', 'array', 'string', 'boolean', 'null'] as const) if (apartAtoms.has(t)) names.push(t);
  if (apartAtoms.has('integer') && apartAtoms.has('fraction')) names.push('number');
  else if (apartAtoms.has('integer')) names.push('integer');
  return names;
}

/** True when no JSON value meets both `a` and `b` (proved by the rules above); false when they may share one. */
export function provablyDisjoint(a: unknown, b: unknown, context: DisjointContext): boolean {
  return disjointAt(a, b, context, 0);
}
