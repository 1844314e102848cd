/**
 * `oneOf` as options weft can read in parallel (as `anyOf`) without ever writing a value that
 * matches two of them.
 *
 * - Options that are provably disjoint (disjoint.ts) need nothing: "at least one" is "exactly one".
 * - Two options i and j that may overlap are made exclusive by narrowing i to a form that cannot
 *   meet j (`exclusions`): one of the properties j requires and i does not left out (its schema
 *   `false`: the common `oneOf: [{ required: ['a'] }, { required: ['b'] }]`); i restricted to the
 *   JSON types on which the two are disjoint; or a property both declare, with disjoint schemas,
 *   made required (an optional discriminator). One narrowing per overlapping j, in every
 *   combination, at most MAX_NARROWED options in all. Exact when the options differ only in
 *   `required`; a subset of the schema's language otherwise (a value meeting i and only part of
 *   j's other keywords is valid but not written), which is the compiler's rule: never larger.
 * - Any other overlap is refused by name: weft cannot exclude it.
 */
import { InvalidOptionError } from '../errors.js';
import { provablyDisjoint, typesApart, type DisjointContext } from './disjoint.js';

const MAX_NARROWED = 64;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function requiredOf(s: unknown): string[] {
  return isObject(s) && Array.isArray(s.required) ? s.required.filter((k): k is string => typeof k === 'string') : [];
}

/**
 * Schemas disjoint from `theirs`, each of which may narrow `mine` (an option that overlaps it):
 * a property `theirs` requires left out; `mine` restricted to the types on which the two are
 * disjoint; a property both declare with disjoint schemas made required (an optional discriminator).
 */
function exclusions(mine: unknown, theirs: unknown, myRequired: ReadonlySet<string>, context: DisjointContext): unknown[] {
  const ways: unknown[] = requiredOf(theirs)
    .filter((k) => !myRequired.has(k))
    .map((k) => ({ type: 'object', properties: { [k]: false } }));
  const types = typesApart(mine, theirs, context);
  if (types.length > 0) ways.push({ type: types });
  if (isObject(mine) && isObject(theirs) && isObject(mine.properties) && isObject(theirs.properties)) {
    for (const [k, schema] of Object.entries(mine.properties)) {
      if (myRequired.has(k) || !Object.hasOwn(theirs.properties, k)) continue;
      if (provablyDisjoint(schema, theirs.properties[k], context)) ways.push({ type: 'object', required: [k] });
    }
  }
  return ways;
}

/** The options of `oneOf` (siblings already applied), rewritten so no value meets two; throws InvalidOptionError where weft cannot. */
export function exclusiveOptions(options: readonly unknown[], context: DisjointContext, at: string): unknown[] {
  const expanded = options.map((o) => context.expand(o));
  const out: unknown[] = [];
  for (let i = 0; i < options.length; i++) {
    const mine = new Set(requiredOf(expanded[i]));
    // For each option j that may overlap this one, the ways to narrow this one so it never meets j.
    const choices: unknown[][] = [];
    for (let j = 0; j < options.length; j++) {
      if (j === i || provablyDisjoint(expanded[i], expanded[j], context)) continue;
      const ways = exclusions(expanded[i], expanded[j], mine, context);
      if (ways.length === 0) {
        const [x, y] = i < j ? [i, j] : [j, i];
        throw new InvalidOptionError(at, `guided generation does not support "oneOf" whose options may overlap: options ${x} and ${y} are not provably disjoint (different types, distinct const/enum values of a required property, disjoint ranges or lengths), and weft finds no property or type by which to exclude a value that matches both; use anyOf if a value may match several`);
      }
      choices.push(ways);
    }
    if (choices.length === 0) {
      out.push(options[i]);
      continue;
    }
    // One narrowing per overlapping option, in every combination.
    let combos: unknown[][] = [[]];
    for (const ways of choices) {
      combos = combos.flatMap((combo) => ways.map((w) => [...combo, w]));
      if (out.length + combos.length > MAX_NARROWED) throw new InvalidOptionError(at, `guided generation does not support a "oneOf" whose exclusion needs more than ${MAX_NARROWED} options (narrowings of overlapping options multiply)`);
    }
    const seen = new Set<string>();
    for (const combo of combos) {
      const key = combo.map((w) => JSON.stringify(w)).sort().join('\n');
      if (seen.has(key)) continue;
      seen.add(key);
      const narrowed = { allOf: [options[i], ...combo] };
      if (context.expand(narrowed) !== false) out.push(narrowed);
    }
  }
  if (out.length === 0) throw new InvalidOptionError(at, 'no value meets exactly one option of the oneOf');
  return out;
}
