/**
 * n > 1 sampling (docs/parallel-sampling.md): n choices of one prompt, each
 * an engine request of its own (its own seed stream, its own sink, its own
 * abort), of which only the first, the leader, computes the prompt.
 *
 * The others, its followers, wait outside the scheduler. In the step that
 * completes the leader's prompt, each follower forks the leader's blocks
 * (KvCacheManager.fork: full blocks shared, the partial tail copied) and takes
 * its first token from a copy of the leader's logits row; from then on it is
 * an ordinary running request.
 *
 * Invariants:
 *  P1. Prompt once: a follower that forks computes no prompt token; its
 *      first token is drawn from the leader's row of that step, by its own
 *      sampler, so it equals a solo run of its spec.
 *  P2. A fork that cannot be made (no free block for the copied tail, or
 *      maxNumSeqs reached, or a hybrid model whose recurrent state is not
 *      copied, or a backend that cannot copy blocks: ModelShape.copiesBlocks)
 *      leaves the follower an ordinary waiting request: it prefills
 *      the prompt itself (prefix hits included). Slower, never wrong.
 *  P3. The copies a fork asks for are made by the backend at the start of
 *      the next step, before that step writes anything (both backends apply
 *      StepBatch.blockCopies first), so the source still holds the leader's
 *      prompt. Copies into a request that no longer holds its blocks
 *      (aborted, preempted meanwhile) are dropped.
 *  P4. A leader that ends before its prompt is complete (aborted, failed)
 *      hands its followers on: the first becomes the leader, queued in its
 *      place. A follower that ends before it forks just leaves the group.
 */

import type { BlockCopy } from './kv/kv-cache-manager.js';
import type { RequestSpec } from './request.js';

/** The specs of n choices of `spec`: choice i samples with seed + i (so each equals its solo run with that seed). */
export function choiceSpecs(spec: RequestSpec, n: number): RequestSpec[] {
  return Array.from({ length: n }, (_, i) => (i === 0 ? spec : { ...spec, sampling: { ...spec.sampling, seed: spec.sampling.seed + i } }));
}

/** Attention-block copies forks asked for, to be made at the start of the next step (P3). */
export class PendingCopies {
  private pairs: { readonly requestId: number; readonly src: number; readonly dst: number }[] = [];

  get isEmpty(): boolean {
    return this.pairs.length === 0;
  }

  add(requestId: number, copies: readonly BlockCopy[]): void {
    for (const { pool, src, dst } of copies) {
      // Only attention pools are forked (P2: hybrid models do not fork).
      if (pool === 0) this.pairs.push({ requestId, src, dst });
    }
  }

  /** StepBatch.blockCopies for the next step, of the requests `holds` still says hold their blocks; empties the queue. */
  take(holds: (requestId: number) => boolean): Int32Array | undefined {
    const kept = this.pairs.filter(({ requestId }) => holds(requestId));
    this.pairs = [];
    if (kept.length === 0) return undefined;
    const flat = new Int32Array(kept.length * 2);
    kept.forEach(({ src, dst }, i) => {
      flat[2 * i] = src;
      flat[2 * i + 1] = dst;
    });
    return flat;
  }
}
