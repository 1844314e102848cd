/**
 * JSON Schema `pattern` (and the regexes `format` is written in): an ECMAScript
 * regular expression as a lazily determinised automaton over code points.
 *
 * Structure (alternation, groups, quantifiers with bounds, anchors) is parsed
 * here into a Thompson NFA; each atom (a character, an escape, `.`, a class)
 * is decided by the platform's own RegExp on one code point, so classes mean
 * exactly what ECMAScript says (`\d`, `\w`, `\s`, `\p{L}`, ranges, negation).
 * JSON Schema patterns are not anchored: the automaton decides whether the
 * string contains a match (`^`/`$` anchor it to the string's start/end, as
 * without the `m` flag). The `u` flag is used (as ajv does); a pattern that
 * only compiles without it (`\_`, `\-` outside a class) is read without it.
 *
 * Refused, by name: lookahead and lookbehind, backreferences, `\b`/`\B`, and
 * patterns whose automaton would exceed a size bound (a typed error, never a
 * hang: `(a{1000}){1000}` is refused at compile).
 *
 * Each automaton state knows the fewest characters that still lead to a
 * match, so a string frame with a `maxLength` refuses a character after which
 * the pattern could no longer match in time (masks stay exact).
 */
import { InvalidOptionError } from '../errors.js';

/** NFA states at most (after expanding bounded quantifiers). */
const MAX_NFA_STATES = 20_000;
/** DFA states cached per pattern; past this, transitions are still computed, just not stored. */
const MAX_DFA_STATES = 50_000;

type Node =
  | { readonly t: 'atom'; readonly atom: number }
  | { readonly t: 'seq'; readonly items: readonly Node[] }
  | { readonly t: 'alt'; readonly items: readonly Node[] }
  | { readonly t: 'rep'; readonly node: Node; readonly min: number; readonly max: number }
  | { readonly t: 'bol' }
  | { readonly t: 'eol' };

/** One atom: a set of code points, decided by a RegExp, memoised. */
class Atom {
  private readonly ascii = new Int8Array(128).fill(-1);
  private readonly other = new Map<number, boolean>();
  private readonly ranges = new Map<number, boolean>();
  private readonly re: RegExp;
  private search: RegExp | undefined;
  constructor(
    readonly source: string,
    readonly flags: string,
  ) {
    this.re = new RegExp(`^(?:${source})$`, flags);
  }
  /** Whether some code point in [lo, hi] (surrogates aside) is in the atom: the platform's RegExp scans a string of them all. */
  intersects(lo: number, hi: number): boolean {
    if (hi - lo < 64) {
      for (let cp = lo; cp <= hi; cp++) if ((cp < 0xd800 || cp > 0xdfff) && this.has(cp)) return true;
      return false;
    }
    const key = lo * 0x110000 + hi;
    let v = this.ranges.get(key);
    if (v === undefined) {
      this.search ??= new RegExp(`(?:${this.source})`, this.flags);
      const parts: string[] = [];
      const chunk: number[] = [];
      for (let cp = lo; cp <= hi; cp++) {
        if (cp >= 0xd800 && cp <= 0xdfff) continue;
        chunk.push(cp);
        if (chunk.length === 4096) {
          parts.push(String.fromCodePoint(...chunk));
          chunk.length = 0;
        }
      }
      parts.push(String.fromCodePoint(...chunk));
      v = this.search.test(parts.join(''));
      if (this.ranges.size < 4096) this.ranges.set(key, v);
    }
    return v;
  }
  has(cp: number): boolean {
    if (cp < 128) {
      let v = this.ascii[cp]!;
      if (v === -1) this.ascii[cp] = v = this.re.test(String.fromCodePoint(cp)) ? 1 : 0;
      return v === 1;
    }
    let v = this.other.get(cp);
    if (v === undefined) {
      v = this.re.test(String.fromCodePoint(cp));
      if (this.other.size < 4096) this.other.set(cp, v);
    }
    return v;
  }
}

class Parser {
  pos = 0;
  readonly atoms: Atom[] = [];
  private readonly atomIds = new Map<string, number>();
  constructor(
    readonly src: string,
    readonly flags: string,
    readonly where: string,
  ) {}

  fail(what: string): never {
    throw new InvalidOptionError(this.where, `pattern ${JSON.stringify(this.src)}: ${what}`);
  }

  atom(source: string): Node {
    let id = this.atomIds.get(source);
    if (id === undefined) {
      id = this.atoms.length;
      this.atoms.push(new Atom(source, this.flags));
      this.atomIds.set(source, id);
    }
    return { t: 'atom', atom: id };
  }

  /** The code point at pos as a string (a surrogate pair is one character with the u flag). */
  private char(): string {
    const cp = this.src.codePointAt(this.pos)!;
    return String.fromCodePoint(cp);
  }

  parseAlt(): Node {
    const items: Node[] = [this.parseSeq()];
    while (this.src[this.pos] === '|') {
      this.pos++;
      items.push(this.parseSeq());
    }
    return items.length === 1 ? items[0]! : { t: 'alt', items };
  }

  private parseSeq(): Node {
    const items: Node[] = [];
    while (this.pos < this.src.length && this.src[this.pos] !== '|' && this.src[this.pos] !== ')') {
      let node = this.parseTerm();
      node = this.parseQuantifiers(node);
      items.push(node);
    }
    return items.length === 1 ? items[0]! : { t: 'seq', items };
  }

  private parseQuantifiers(node: Node): Node {
    for (;;) {
      const c = this.src[this.pos];
      let min: number, max: number;
      if (c === '*') [min, max] = [0, Infinity];
      else if (c === '+') [min, max] = [1, Infinity];
      else if (c === '?') [min, max] = [0, 1];
      else if (c === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.pos));
        if (m === null) return node; // a literal `{` (without the u flag); RegExp accepted it
        min = Number(m[1]);
        max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
        this.pos += m[0].length - 1;
      } else return node;
      this.pos++;
      if (this.src[this.pos] === '?') this.pos++; // lazy: the same language
      if (node.t === 'bol' || node.t === 'eol') continue; // a quantified anchor: RegExp allows it without u; it asserts the same
      node = { t: 'rep', node, min, max };
    }
  }

  private parseTerm(): Node {
    const c = this.src[this.pos]!;
    if (c === '^') {
      this.pos++;
      return { t: 'bol' };
    }
    if (c === '$') {
      this.pos++;
      return { t: 'eol' };
    }
    if (c === '(') {
      this.pos++;
      if (this.src.startsWith('?:', this.pos)) this.pos += 2;
      else if (this.src.startsWith('?=', this.pos) || this.src.startsWith('?!', this.pos)) this.fail('lookahead is not supported by guided generation');
      else if (this.src.startsWith('?<=', this.pos) || this.src.startsWith('?<!', this.pos)) this.fail('lookbehind is not supported by guided generation');
      else if (this.src.startsWith('?<', this.pos)) {
        const end = this.src.indexOf('>', this.pos);
        this.pos = end + 1;
      } else if (this.src[this.pos] === '?') this.fail('this group syntax is not supported by guided generation');
      const inner = this.parseAlt();
      if (this.src[this.pos] !== ')') this.fail('unbalanced parenthesis');
      this.pos++;
      return inner;
    }
    if (c === '[') {
      const start = this.pos;
      this.pos++;
      if (this.src[this.pos] === '^') this.pos++;
      while (this.pos < this.src.length && this.src[this.pos] !== ']') {
        if (this.src[this.pos] === '\\') this.pos++;
        this.pos++;
      }
      if (this.pos >= this.src.length) this.fail('unterminated character class');
      this.pos++;
      return this.atom(this.src.slice(start, this.pos));
    }
    if (c === '\\') {
      const next = this.src[this.pos + 1];
      if (next === undefined) this.fail('trailing backslash');
      if (next === 'b' || next === 'B') this.fail(`the word-boundary assertion \\${next} is not supported by guided generation`);
      if (/[1-9]/.test(next) || next === 'k') this.fail('backreferences are not supported by guided generation');
      const m =
        /^\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}\\u[0-9a-fA-F]{4}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|c[A-Za-z]|[pP]\{[^}]*\}|0(?![0-9])|[\s\S])/.exec(this.src.slice(this.pos));
      let text = m![0];
      // A \uXXXX\uXXXX pair is one character only when it is a surrogate pair.
      if (/^\\u[0-9a-fA-F]{4}\\u/.test(text)) {
        const hi = parseInt(text.slice(2, 6), 16), lo = parseInt(text.slice(8, 12), 16);
        if (!(hi >= 0xd800 && hi <= 0xdbff && lo >= 0xdc00 && lo <= 0xdfff && this.flags.includes('u'))) text = text.slice(0, 6);
      }
      this.pos += text.length;
      return this.atom(text);
    }
    if (c === ')') this.fail('unbalanced parenthesis');
    if (c === '*' || c === '+' || c === '?') this.fail('nothing to repeat');
    const ch = this.flags.includes('u') ? this.char() : c;
    this.pos += ch.length;
    // `.` and literal characters; a syntax character alone is escaped for the atom's RegExp.
    return this.atom(ch === '.' ? '.' : /[\\^$.*+?()[\]{}|/]/.test(ch) ? `\\${ch}` : ch);
  }
}

interface NfaState {
  /** Atom transitions: [atom, to]. */
  readonly edges: [number, number][];
  /** Epsilon transitions: [to, condition] where condition is 0 (always), 1 (at the start), 2 (at the end). */
  readonly eps: [number, 0 | 1 | 2][];
}

export class Pattern {
  private readonly nfa: NfaState[] = [];
  private readonly atoms: Atom[];
  private readonly final: number;
  /** Fewest characters from each NFA state to a match (Infinity: none). */
  private readonly distance: Float64Array;
  private readonly dfaSets: (readonly number[])[] = [];
  private readonly dfaIds = new Map<string, number>();
  private readonly dfaNext: Map<number, number>[] = [];
  private readonly dfaAccepts: (boolean | undefined)[] = [];
  private readonly dfaMin: number[] = [];
  /** The state before any character. */
  readonly start: number;

  private constructor(
    readonly source: string,
    root: Node,
    atoms: Atom[],
    where: string,
  ) {
    this.atoms = atoms;
    const state = (): number => {
      if (this.nfa.length >= MAX_NFA_STATES) throw new InvalidOptionError(where, `pattern ${JSON.stringify(source)} is too large for guided generation (over ${MAX_NFA_STATES} automaton states)`);
      this.nfa.push({ edges: [], eps: [] });
      return this.nfa.length - 1;
    };
    const ANY = atoms.length;
    atoms.push(new Atom('[\\s\\S]', 'u'));
    // Search: any prefix, the pattern, any suffix.
    const s0 = state();
    this.nfa[s0]!.edges.push([ANY, s0]);
    const build = (node: Node, from: number): number => {
      switch (node.t) {
        case 'atom': {
          const to = state();
          this.nfa[from]!.edges.push([node.atom, to]);
          return to;
        }
        case 'bol':
        case 'eol': {
          const to = state();
          this.nfa[from]!.eps.push([to, node.t === 'bol' ? 1 : 2]);
          return to;
        }
        case 'seq':
          return node.items.reduce((at, item) => build(item, at), from);
        case 'alt': {
          const to = state();
          for (const item of node.items) this.nfa[build(item, from)]!.eps.push([to, 0]);
          return to;
        }
        case 'rep': {
          let at = from;
          for (let i = 0; i < node.min; i++) at = build(node.node, at);
          if (node.max === Infinity) {
            const loop = state();
            this.nfa[at]!.eps.push([loop, 0]);
            const end = build(node.node, loop);
            this.nfa[end]!.eps.push([loop, 0]);
            return loop;
          }
          const to = state();
          this.nfa[at]!.eps.push([to, 0]);
          for (let i = node.min; i < node.max; i++) {
            at = build(node.node, at);
            this.nfa[at]!.eps.push([to, 0]);
          }
          return to;
        }
      }
    };
    const end = build(root, s0);
    this.final = state();
    this.nfa[end]!.eps.push([this.final, 0]);
    this.nfa[this.final]!.edges.push([ANY, this.final]);
    this.distance = this.distances();
    this.start = this.dfaState(this.closure([s0], true));
  }

  /** Compiles `source`; throws InvalidOptionError (option `where`) naming what is not supported. */
  static compile(source: string, where: string): Pattern {
    let flags = 'u';
    try {
      new RegExp(source, 'u');
    } catch {
      try {
        new RegExp(source);
        flags = '';
      } catch (error) {
        throw new InvalidOptionError(where, `pattern ${JSON.stringify(source)} is not a valid ECMAScript regular expression (${(error as Error).message})`);
      }
    }
    const parser = new Parser(source, flags, where);
    const root = parser.parseAlt();
    if (parser.pos !== source.length) parser.fail('unbalanced parenthesis');
    return new Pattern(source, root, parser.atoms, where);
  }

  /** Fewest characters to the final state, with start anchors unusable (they only hold before any character) and end anchors free. */
  private distances(): Float64Array {
    const n = this.nfa.length;
    const reverse: [number, number][][] = Array.from({ length: n }, () => []);
    this.nfa.forEach((s, from) => {
      for (const [atom, to] of s.edges) if (!this.atomEmpty(atom)) reverse[to]!.push([from, 1]);
      for (const [to, cond] of s.eps) if (cond !== 1) reverse[to]!.push([from, 0]);
    });
    const dist = new Float64Array(n).fill(Infinity);
    dist[this.final] = 0;
    // 0-1 BFS.
    const deque: number[] = [this.final];
    let head = 0;
    const front: number[] = [];
    while (front.length > 0 || head < deque.length) {
      const u = front.length > 0 ? front.pop()! : deque[head++]!;
      for (const [v, w] of reverse[u]!) {
        if (dist[u]! + w < dist[v]!) {
          dist[v] = dist[u]! + w;
          if (w === 0) front.push(v);
          else deque.push(v);
        }
      }
    }
    return dist;
  }

  private atomEmpty(atom: number): boolean {
    const a = this.atoms[atom]!;
    return a.source === '[]' || a.source === '[^\\s\\S]';
  }

  /** The epsilon closure of `states`, keeping only states that can still reach a match. */
  private closure(states: readonly number[], atStart: boolean): number[] {
    const seen = new Set<number>();
    const stack = [...states];
    while (stack.length > 0) {
      const s = stack.pop()!;
      if (seen.has(s)) continue;
      seen.add(s);
      for (const [to, cond] of this.nfa[s]!.eps) if (cond === 0 || (cond === 1 && atStart)) stack.push(to);
    }
    return [...seen].filter((s) => this.distance[s] !== Infinity).sort((a, b) => a - b);
  }

  private dfaState(set: readonly number[]): number {
    if (set.length === 0) return -1;
    // Once the match is found the rest is free: one state for all of those.
    const key = set.includes(this.final) ? 'F' : set.join(',');
    let id = this.dfaIds.get(key);
    if (id === undefined) {
      id = this.dfaSets.length;
      // Past the bound the id map starts afresh (memory stays bounded by what one string reads).
      if (id >= MAX_DFA_STATES && this.dfaIds.size >= MAX_DFA_STATES) this.dfaIds.clear();
      this.dfaSets.push(key === 'F' ? [this.final] : set);
      this.dfaNext.push(new Map());
      this.dfaMin.push(Math.min(...set.map((s) => this.distance[s]!)));
      this.dfaIds.set(key, id);
    }
    return id;
  }

  /** The state after code point `cp`, or -1 when no match is possible any more. */
  step(state: number, cp: number): number {
    const cached = this.dfaNext[state]!.get(cp);
    if (cached !== undefined) return cached;
    const next: number[] = [];
    for (const s of this.dfaSets[state]!) for (const [atom, to] of this.nfa[s]!.edges) if (this.atoms[atom]!.has(cp)) next.push(to);
    const id = this.dfaState(this.closure(next, false));
    if (this.dfaNext[state]!.size < 1024) this.dfaNext[state]!.set(cp, id);
    return id;
  }

  /**
   * Whether some code point in [lo, hi] leads from `state` to a state that can still match within
   * `budget` more characters after it: what a string frame asks of a byte that only starts a
   * character (a UTF-8 lead byte, a `\\u` escape's first digits), so that its masks never
   * take a byte that no character can complete.
   */
  canStep(state: number, lo: number, hi: number, budget: number): boolean {
    if (state === this.finalState) return true;
    for (const s of this.dfaSets[state]!) {
      for (const [atom, to] of this.nfa[s]!.edges) if (this.distance[to]! <= budget && this.atoms[atom]!.intersects(lo, hi)) return true;
    }
    return false;
  }

  private get finalState(): number {
    return this.dfaIds.get('F') ?? -2;
  }

  /** Whether the string may end in `state` (the text read so far contains a match). */
  accepts(state: number): boolean {
    let v = this.dfaAccepts[state];
    if (v === undefined) {
      const seen = new Set<number>();
      const stack = [...this.dfaSets[state]!];
      while (stack.length > 0) {
        const s = stack.pop()!;
        if (seen.has(s)) continue;
        seen.add(s);
        // Start anchors were followed when the start state was made; after that they never hold.
        for (const [to, cond] of this.nfa[s]!.eps) if (cond !== 1) stack.push(to);
      }
      v = seen.has(this.final);
      this.dfaAccepts[state] = v;
    }
    return v;
  }

  /** Whether the text read so far contains a match already: whatever follows, the pattern holds. */
  matched(state: number): boolean {
    const set = this.dfaSets[state]!;
    return set.length === 1 && set[0] === this.final;
  }

  /** The fewest characters after which the string may end, from `state`. */
  minRemaining(state: number): number {
    return this.dfaMin[state]!;
  }

  /** Whether `text` contains a match (what `new RegExp(pattern, 'u').test(text)` says, for supported patterns). */
  test(text: string): boolean {
    let state = this.start;
    for (const ch of text) {
      state = this.step(state, ch.codePointAt(0)!);
      if (state < 0) return false;
    }
    return this.accepts(state);
  }
}
