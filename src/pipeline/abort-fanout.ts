/**
 * One 'abort' listener per AbortSignal, however many requests share it.
 *
 * Apps often pass one signal to many requests (a page, a session, a batch).
 * A listener per request would trip Node's MaxListenersExceededWarning at 11
 * and grow the signal's listener list with every request; here the signal
 * holds one listener that fans out to the requests still waiting on it.
 */

const waiting = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `onAbort` once when `signal` aborts; the returned function unsubscribes. */
export function onSignalAbort(signal: AbortSignal, onAbort: () => void): () => void {
  let callbacks = waiting.get(signal);
  if (callbacks === undefined) {
    const set = new Set<() => void>();
    callbacks = set;
    waiting.set(signal, set);
    signal.addEventListener(
      'abort',
      () => {
        waiting.delete(signal);
        for (const callback of set) callback();
      },
      { once: true },
    );
  }
  const set = callbacks;
  set.add(onAbort);
  return () => {
    set.delete(onAbort);
  };
}
