/**
 * The engine's error channel for what can happen in a correct engine: capacity
 * (KvError) and admission (AddError) problems are values, never exceptions, so
 * a caller must look at `ok` before using `value`. What cannot happen throws
 * EngineError instead (see request.ts). Internal: not part of weft's exports.
 */
export type Result<T, E> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: E };

export const ok = <T>(value: T): Result<T, never> => ({ ok: true, value });
export const err = <E>(error: E): Result<never, E> => ({ ok: false, error });

/** The shared success value of operations that return nothing (no allocation on hot paths). */
export const OK: Result<void, never> = Object.freeze({ ok: true as const, value: undefined });
