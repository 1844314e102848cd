import { EOS } from './byte-tokenizer.js';

/**
 * A next-token rule that answers with `script` (its bytes, or token ids; then EOS) after the
 * last occurrence of `marker` in the context: a model that "says" exactly
 * this, however the engine batches, chunks or preempts it.
 */
export function scriptedRule(marker: string, script: string | readonly number[]): (context: readonly number[]) => number {
  const markerBytes = [...new TextEncoder().encode(marker)];
  const scriptBytes = typeof script === 'string' ? [...new TextEncoder().encode(script)] : script;
  return (context) => {
    let start = -1;
    for (let at = context.length - markerBytes.length; at >= 0; at--) {
      if (markerBytes.every((b, i) => context[at + i] === b)) {
        start = at + markerBytes.length;
        break;
      }
    }
    const index = context.length - start;
    return start >= 0 && index < scriptBytes.length ? scriptBytes[index]! : EOS;
  };
}
