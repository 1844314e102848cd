/**
 * The three grammar engines behind one interface, over one vocabulary:
 * weft's own automaton (src/guided), xgrammar's WASM build
 * (@mlc-ai/web-xgrammar, this folder's package.json) and llguidance (the Rust
 * crate through the Node-API binding in ./llguidance, built by build.sh).
 */
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { END_STACK, Stack } from '../../src/guided/automaton.js';
import { CompiledGrammar } from '../../src/guided/grammar.js';
import { valueStart } from '../../src/guided/json-frames.js';
import { compileSchema } from '../../src/guided/json-schema.js';
import type { Vocabulary } from '../../src/guided/vocabulary.js';
import { byteAlphabet } from '../vs-llama-cpp/vocabulary.js';

export interface EngineMatcher {
  /** Bit t for every allowed token (the end token where the grammar may end); false if none. */
  fillMask(mask: Uint32Array): boolean | Promise<boolean>;
  acceptToken(token: number): boolean;
  rollback(n: number): void;
  isTerminated(): boolean;
  dispose(): void;
}

export interface Engine {
  readonly name: string;
  /** One-time cost per vocabulary (tokenizer info, tries, per-vocabulary indexes), ms. */
  readonly prepareMs: number;
  compile(schema: unknown): Promise<{ matcher(): Promise<EngineMatcher>; dispose(): void }>;
}

const here = import.meta.dirname;
const cache = join(here, '.build');

/** weft: compile = schema -> automaton; masks are walked on first use and cached per grammar. */
export function weftEngine(vocabulary: Vocabulary, endToken: number, prepare: () => void): Engine {
  const started = performance.now();
  prepare();
  return {
    name: 'weft (TS automaton)',
    prepareMs: performance.now() - started,
    async compile(schema) {
      const grammar = new CompiledGrammar(vocabulary, new Stack(valueStart(compileSchema(schema, 'schema')), END_STACK));
      return {
        matcher: async () => {
          const m = grammar.matcher([endToken]);
          return { fillMask: (mask) => m.fillMask(mask), acceptToken: (t) => m.acceptToken(t), rollback: (n) => m.rollback(n), isTerminated: () => m.isTerminated(), dispose: () => {} };
        },
        dispose: () => {},
      };
    },
  };
}

/** The part of @mlc-ai/web-xgrammar's API used here (declared, so a clone without the package still typechecks). */
interface XgrammarModule {
  TokenizerInfo: { createTokenizerInfo(vocab: string[], vocabType: string, prependSpace: boolean, vocabSize: number, stopTokenIds: number[]): Promise<object> };
  GrammarCompiler: { createGrammarCompiler(info: object, cacheEnabled: boolean): Promise<XgrammarCompiler> };
  GrammarMatcher: { createGrammarMatcher(compiled: XgrammarCompiled, overrideStopTokens: number[]): Promise<XgrammarMatcher> };
}
interface XgrammarCompiler {
  compileJSONSchema(schema: string, anyWhitespace: boolean, indent: number, separators: [string, string], strictMode: boolean): Promise<XgrammarCompiled>;
}
interface XgrammarCompiled {
  dispose(): void;
}
interface XgrammarMatcher {
  getNextTokenBitmask(): Promise<Int32Array>;
  acceptToken(token: number): boolean;
  rollBack(n: number): void;
  isTerminated(): boolean;
  dispose(): void;
}

/**
 * The packaging workaround: the package says "type": "module" but lib/index.js is a UMD bundle
 * (it reads `exports`, `require` and `__filename`), so under Node it loads as ESM, exports nothing
 * and throws on `require`. A copy named .cjs loads as the CommonJS module it is.
 */
function loadXgrammar(instance: number): XgrammarModule {
  const source = join(here, 'node_modules', '@mlc-ai', 'web-xgrammar', 'lib', 'index.js');
  mkdirSync(cache, { recursive: true });
  // One file per instance: each is a separate module, so a separate WASM instance (an abort kills only its own).
  const copy = join(cache, `web-xgrammar-${instance}.cjs`);
  copyFileSync(source, copy);
  return createRequire(import.meta.url)(copy) as XgrammarModule;
}

/** Token strings in GPT-2's byte-level form; tokens without bytes (the end token) are '' (special to xgrammar). */
export function byteLevelStrings(vocabulary: Vocabulary): string[] {
  const alphabet = byteAlphabet();
  return Array.from({ length: vocabulary.size }, (_, id) => {
    const bytes = vocabulary.tokenBytes[id];
    return bytes ? Array.from(bytes, (b) => alphabet[b]!).join('') : '';
  });
}

/** How xgrammar writes JSON: separators (item, key) and strict mode (no undeclared properties or items). */
export interface XgrammarJsonOptions {
  readonly separators: [string, string];
  readonly strict: boolean;
}

/** xgrammar: compile = EBNF from the schema plus its adaptive token mask cache over the vocabulary. */
export async function xgrammarEngine(vocabulary: Vocabulary, endToken: number, instance = 0, json: XgrammarJsonOptions = { separators: [', ', ': '], strict: true }): Promise<Engine> {
  const xg = loadXgrammar(instance);
  const strings = byteLevelStrings(vocabulary);
  const started = performance.now();
  const info = await xg.TokenizerInfo.createTokenizerInfo(strings, 'byte_level', false, vocabulary.size, [endToken]);
  const compiler = await xg.GrammarCompiler.createGrammarCompiler(info, false); // no cache: every compile is real
  const prepareMs = performance.now() - started;
  const words = (vocabulary.size + 31) >>> 5;
  return {
    name: 'xgrammar 0.1.27 (WASM)',
    prepareMs,
    async compile(schema) {
      // One line; by default ", " and ": ", the nearest to weft's compact JSON.
      const compiled = await compiler.compileJSONSchema(JSON.stringify(schema), false, -1, json.separators, json.strict);
      return {
        matcher: async () => {
          const m = await xg.GrammarMatcher.createGrammarMatcher(compiled, [endToken]);
          return {
            async fillMask(mask) {
              const bits = await m.getNextTokenBitmask();
              mask.set(new Uint32Array(bits.buffer, bits.byteOffset, words));
              return mask.some((w) => w !== 0);
            },
            acceptToken: (t) => m.acceptToken(t),
            rollback: (n) => m.rollBack(n),
            isTerminated: () => m.isTerminated(),
            dispose: () => m.dispose(),
          };
        },
        dispose: () => compiled.dispose(),
      };
    },
  };
}

interface LlgBinding {
  LlgVocabulary: new (bytes: Buffer, offsets: Uint32Array, eos: number) => object;
  LlgMatcher: { jsonSchema(vocabulary: object, schema: string): LlgMatcher };
}
interface LlgMatcher {
  fork(): LlgMatcher;
  fillMask(mask: Uint32Array): boolean;
  acceptToken(t: number): boolean;
  rollback(n: number): void;
  isStopped(): boolean;
}

export const llguidanceBinary = join(cache, 'llguidance.node');

/** llguidance: compile = schema -> grammar -> parser; masks computed per step (lexer + Earley over the token trie). */
export function llguidanceEngine(vocabulary: Vocabulary, endToken: number): Engine | undefined {
  if (!existsSync(llguidanceBinary)) return undefined;
  const llg = createRequire(import.meta.url)(llguidanceBinary) as LlgBinding;
  const encoder = new TextEncoder();
  const parts = Array.from({ length: vocabulary.size }, (_, id) => vocabulary.tokenBytes[id] ?? Uint8Array.from([0xff, ...encoder.encode(`<|special_${id}|>`)]));
  const offsets = new Uint32Array(parts.length + 1);
  parts.forEach((p, i) => (offsets[i + 1] = offsets[i]! + p.length));
  const bytes = Buffer.concat(parts);
  const started = performance.now();
  const llgVocabulary = new llg.LlgVocabulary(bytes, offsets, endToken);
  const prepareMs = performance.now() - started;
  return {
    name: 'llguidance 1.9.1 (Rust, N-API)',
    prepareMs,
    async compile(schema) {
      // Compact, one space after ':' and ',', as xgrammar above.
      const text = JSON.stringify({ ...(schema as object), 'x-guidance': { whitespace_flexible: false, item_separator: ', ', key_separator: ': ' } });
      const compiled = llg.LlgMatcher.jsonSchema(llgVocabulary, text);
      return {
        matcher: async () => {
          const m = compiled.fork();
          return { fillMask: (mask) => m.fillMask(mask), acceptToken: (t) => m.acceptToken(t), rollback: (n) => m.rollback(n), isTerminated: () => m.isStopped(), dispose: () => {} };
        },
        dispose: () => {},
      };
    },
  };
}
