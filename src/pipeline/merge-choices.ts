/**
 * The part streams of a request's n choices (n > 1: docs/parallel-sampling.md)
 * as one stream, each part tagged with its choice's index, in the order the
 * parts come. It ends once every choice has finished. A choice that fails
 * (throws) fails the whole request: the other choices are cancelled first,
 * then the error is thrown; so does a consumer that stops reading.
 */

export async function* mergeChoices<Part extends object>(runs: readonly AsyncGenerator<Part>[], cancelAll: () => void): AsyncGenerator<Part & { readonly choice: number }> {
  type Next = Promise<{ readonly index: number; readonly result: IteratorResult<Part> }>;
  const nextOf = (index: number): Next => runs[index]!.next().then((result) => ({ index, result }));
  const pending: (Next | undefined)[] = runs.map((_, index) => nextOf(index));
  let open = runs.length;
  try {
    while (open > 0) {
      // Promise.race subscribes to every pending next, so a choice failing later is never an unhandled rejection.
      const { index, result } = await Promise.race(pending.filter((next): next is Next => next !== undefined));
      if (result.done === true) {
        pending[index] = undefined;
        open--;
        continue;
      }
      pending[index] = nextOf(index);
      yield { ...result.value, choice: index };
    }
  } finally {
    // A next started just before the consumer left was never raced: its rejection is expected now.
    for (const next of pending) next?.catch(() => {});
    if (open > 0) {
      // A choice's run is waiting on its engine request: cancel them first, or return() would wait behind it.
      cancelAll();
      await Promise.allSettled(runs.map((run) => run.return(undefined)));
    }
  }
}
