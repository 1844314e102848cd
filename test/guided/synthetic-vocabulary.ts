/** A byte-level vocabulary for grammar tests and the benchmark: every byte, then seeded multi-byte tokens like a BPE's. */
import { Vocabulary } from '../../src/guided/vocabulary.js';

const PIECES = ['{"', '":', '", "', '"}', '},', '[{', '}]', ', "', ': ', '":"', 'true', 'false', 'null', '\n', '\n\n', '</', '>\n', '<tool_call>', '</tool_call>', '<function=', '<parameter=', '</parameter>', '</function>', '<think>', '</think>', '12', '3.5', '-1', 'e+', '\\n', '\\"', '\\u00e9', 'é', '日本'];
const LETTERS = 'abcdefghijklmnopqrstuvwxyz_ ABCDEFGHIJ0123456789.,:;!?"{}[]<>/=-';

/**
 * `size` tokens; the last id is the end token (no bytes). `specials` become special tokens (no
 * bytes; their text in `specialText`, as a CompiledGrammar takes it) just before it; `pieces` are
 * more text tokens.
 */
export function syntheticVocabulary(
  size: number,
  seed = 1,
  extra: { specials?: readonly string[]; pieces?: readonly string[] } = {},
): { vocabulary: Vocabulary; endToken: number; specialText: ReadonlyMap<number, Uint8Array> } {
  let state = seed >>> 0 || 1;
  const next = (n: number): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return Math.floor((state / 2 ** 32) * n);
  };
  const encoder = new TextEncoder();
  const tokens: (Uint8Array | null)[] = [];
  for (let b = 0; b < 256; b++) tokens.push(Uint8Array.of(b));
  for (const piece of [...PIECES, ...(extra.pieces ?? [])]) tokens.push(encoder.encode(piece));
  const seen = new Set(tokens.map((t) => t!.join(',')));
  const specials = extra.specials ?? [];
  while (tokens.length < size - 1 - specials.length) {
    const length = 2 + next(9);
    let text = next(3) === 0 ? ' ' : '';
    for (let i = 0; i < length; i++) text += LETTERS[next(next(4) === 0 ? LETTERS.length : 27)];
    const bytes = encoder.encode(text);
    const id = bytes.join(',');
    if (seen.has(id)) continue;
    seen.add(id);
    tokens.push(bytes);
  }
  const specialText = new Map<number, Uint8Array>();
  for (const text of specials) {
    specialText.set(tokens.length, encoder.encode(text));
    tokens.push(null);
  }
  tokens.push(null);
  return { vocabulary: new Vocabulary(tokens, size), endToken: size - 1, specialText };
}

/** Samples a grammar to its end: uniform over allowed tokens, seeded. Returns the text, or undefined if it ran out of tokens. */
export function sampleText(
  matcher: { fillMask(mask: Uint32Array): boolean; acceptToken(token: number): boolean; isTerminated(): boolean },
  vocabulary: Vocabulary,
  endToken: number,
  seed: number,
  maxTokens: number,
  /** The text a special token adds (the reply keeps special tokens' text). */
  specialText?: ReadonlyMap<number, Uint8Array>,
): { text: string; ended: boolean; tokens: number[] } {
  let state = seed >>> 0 || 1;
  const mask = new Uint32Array((vocabulary.size + 31) >>> 5);
  const tokens: number[] = [];
  const bytes: number[] = [];
  for (let step = 0; step < maxTokens && !matcher.isTerminated(); step++) {
    if (!matcher.fillMask(mask)) throw new Error(`dead end after ${JSON.stringify(new TextDecoder().decode(Uint8Array.from(bytes)))}`);
    const allowed: number[] = [];
    for (let t = 0; t < vocabulary.size; t++) if (mask[t >>> 5]! & (1 << (t & 31))) allowed.push(t);
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    // Favour the end token and short tokens a little, so samples finish.
    const token = allowed.includes(endToken) && state % 4 === 0 ? endToken : allowed[Math.floor((state / 2 ** 32) * allowed.length)]!;
    if (!matcher.acceptToken(token)) throw new Error(`token ${token} was in the mask but rejected`);
    tokens.push(token);
    if (token !== endToken) bytes.push(...(vocabulary.tokenBytes[token] ?? specialText?.get(token) ?? fail(token)));
  }
  return { text: new TextDecoder().decode(Uint8Array.from(bytes)), ended: matcher.isTerminated(), tokens };
}

function fail(token: number): never {
  throw new Error(`token ${token} has no bytes and no special text`);
}
