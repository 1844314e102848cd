/**
 * Structural events of a JSON value, as produced by the incremental scanners and consumed by the
 * writer. Every string piece is already valid JSON string text (escapes complete), so a consumer
 * can copy it verbatim.
 */
export interface JsonSink {
  open(kind: '{' | '['): void;
  close(): void;
  /** A complete object key, as a JSON string literal including its quotes. */
  key(jsonString: string): void;
  stringStart(): void;
  /** Escaped characters of the current string value (no surrounding quotes). */
  stringChunk(escaped: string): void;
  stringEnd(): void;
  /** A complete scalar or composite value as JSON text (number, true, false, null, ...). */
  value(json: string): void;
}
