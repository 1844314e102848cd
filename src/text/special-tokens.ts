/**
 * tokenizer_config.json writes special tokens either as a string or as an
 * AddedToken object ({ content, lstrip, ... }); everything else wants the string.
 */
export function specialTokenContent(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object' && typeof (value as { content?: unknown }).content === 'string') {
    return (value as { content: string }).content;
  }
  return undefined;
}
