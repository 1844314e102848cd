/**
 * `weft/guided`: the grammar-level API under guided generation, for tests,
 * benchmarks and advanced users. Compile a JSON schema once, check texts,
 * and walk tokens getting the allowed-token masks of a vocabulary:
 *
 * ```ts
 * import { compileJsonSchema, Vocabulary } from 'weft/guided';
 * const grammar = compileJsonSchema(schema, { whitespace: 'compact' });
 * grammar.accepts('{"city":"Oslo","days":3}'); // true or false
 * const matcher = grammar.matcher(Vocabulary.fromTokenizer(tokenizer, vocabSize), { endTokenIds: [eos] });
 * const mask = matcher.allowedTokens(); // bit t set for each token t allowed next
 * matcher.acceptToken(id);
 * ```
 *
 * This is the same compiler and automaton a pipeline uses for
 * `responseFormat: { type: 'json_schema', schema }` (docs/guided.md).
 */
import { InvalidOptionError } from '../errors.js';
import { advance, canEnd, END_STACK, isComplete, Stack } from './automaton.js';
import { CompiledGrammar, type GrammarMatcher } from './grammar.js';
import { valueStart } from './json-frames.js';
import { compileSchema, type UndeclaredProperties, type ValueSpec, type Whitespace } from './json-schema.js';
import { Vocabulary } from './vocabulary.js';

export { Vocabulary } from './vocabulary.js';
export { applyMask } from './grammar.js';
export type { UndeclaredProperties, Whitespace } from './json-schema.js';
export { FORMATS as SUPPORTED_FORMATS } from './formats.js';

export interface JsonGrammarOptions {
  /** 'compact' (default): at most one space after `:` and `,`, nowhere else; 'flexible': any JSON whitespace between tokens. */
  readonly whitespace?: Whitespace;
  /**
   * Keys of an object that declares properties: 'declared' (default, what generation writes) only
   * those; 'schema' also any other key additionalProperties allows (the schema's own language).
   */
  readonly undeclaredProperties?: UndeclaredProperties;
  /** The option name errors report (default 'schema'). */
  readonly where?: string;
}

export interface MatcherOptions {
  /** Tokens that end the text (EOS): allowed exactly where the value may end. */
  readonly endTokenIds?: readonly number[];
}

/** A compiled JSON schema: which texts it generates, and a matcher per token walk. */
export class JsonGrammar {
  private readonly start: Stack;
  private readonly compiled = new WeakMap<Vocabulary, CompiledGrammar>();

  /** @internal use compileJsonSchema */
  constructor(
    readonly schema: unknown,
    readonly whitespace: Whitespace,
    spec: ValueSpec,
  ) {
    this.start = new Stack(valueStart(spec), END_STACK);
  }

  /** Whether `text` is a whole value this grammar generates (its language is a subset of the schema's: every accepted text validates). */
  accepts(text: string): boolean {
    const state = this.walk(text);
    return state !== null && canEnd(state);
  }

  /** Whether `text` can still be continued into a value this grammar generates. */
  acceptsPrefix(text: string): boolean {
    return this.walk(text) !== null;
  }

  private walk(text: string): Stack | null {
    let state: Stack | null = this.start;
    for (const byte of new TextEncoder().encode(text)) {
      state = advance(state, byte);
      if (state === null) return null;
    }
    return state;
  }

  /** A matcher at the start of this grammar over `vocabulary`; masks are cached per vocabulary and shared by its matchers. */
  matcher(vocabulary: Vocabulary, options: MatcherOptions = {}): JsonMatcher {
    let grammar = this.compiled.get(vocabulary);
    if (grammar === undefined) {
      grammar = new CompiledGrammar(vocabulary, this.start);
      this.compiled.set(vocabulary, grammar);
    }
    return new JsonMatcher(grammar, grammar.matcher(options.endTokenIds ?? []));
  }
}

/** One walk over tokens: masks of the tokens allowed next, and the tokens taken. */
export class JsonMatcher {
  /** @internal use JsonGrammar.matcher */
  constructor(
    private readonly grammar: CompiledGrammar,
    private readonly inner: GrammarMatcher,
  ) {}

  /** Words of the mask: ceil(vocabulary size / 32). */
  get maskWords(): number {
    return this.grammar.maskWords;
  }

  /** Sets bit t of `mask` (token t in word t >>> 5, bit t & 31) for every token allowed next; false if none is. */
  fillMask(mask: Uint32Array): boolean {
    if (mask.length < this.grammar.maskWords) throw new InvalidOptionError('mask', `expected at least ${this.grammar.maskWords} words`);
    return this.inner.fillMask(mask);
  }

  /** The mask of the tokens allowed next, as a new array. */
  allowedTokens(): Uint32Array {
    const mask = new Uint32Array(this.grammar.maskWords);
    this.inner.fillMask(mask);
    return mask;
  }

  /** Whether `token` may come next (nothing changes). */
  allows(token: number): boolean {
    return this.inner.allows(token);
  }

  /** Advances by `token`; false (and no change) if the grammar refuses it. */
  acceptToken(token: number): boolean {
    return this.inner.acceptToken(token);
  }

  /** Accepts tokens in order up to the first refused one; returns how many were accepted. */
  acceptTokens(tokens: Iterable<number>): number {
    let n = 0;
    for (const token of tokens) {
      if (!this.inner.acceptToken(token)) break;
      n++;
    }
    return n;
  }

  /** Forgets the last `n` accepted tokens (never past the start). */
  rollback(n: number): void {
    this.inner.rollback(n);
  }

  /** Whether the value may end here (an end token would be allowed). */
  canEnd(): boolean {
    return this.inner.mayEnd();
  }

  /** Whether nothing more may follow: the value is complete (or an end token was accepted). */
  isComplete(): boolean {
    return this.inner.isTerminated() || isComplete(this.inner.currentState);
  }
}

/**
 * Compiles a JSON schema for guided generation; throws InvalidOptionError naming the keyword it
 * cannot enforce (docs/guided.md lists what it can).
 */
export function compileJsonSchema(schema: unknown, options: JsonGrammarOptions = {}): JsonGrammar {
  const whitespace = options.whitespace ?? 'compact';
  if (whitespace !== 'compact' && whitespace !== 'flexible') throw new InvalidOptionError('whitespace', "expected 'compact' or 'flexible'");
  return new JsonGrammar(schema, whitespace, compileSchema(schema, options.where ?? 'schema', 'json', { whitespace, undeclaredProperties: options.undeclaredProperties ?? 'declared' }));
}
