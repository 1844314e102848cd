/**
 * The engine's error channel. Capacity and state problems inside the engine are
 * values, never exceptions: a caller must look at `ok` before using `value`.
 */
export type Result<T, E> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: E };

export const ok = <T>(value: T): Result<T, never> => ({ ok: true, value });
export const err = <E>(error: E): Result<never, E> => ({ ok: false, error });

/** The shared success value of operations that return nothing (no allocation on hot paths). */
export const OK: Result<void, never> = Object.freeze({ ok: true as const, value: undefined });
