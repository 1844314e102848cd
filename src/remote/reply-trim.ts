/**
 * A server's parse of a chat reply, given the whitespace rule of weft's own
 * reasoning parser (parsers/reasoning/think.ts): reasoning trimmed at both
 * ends, and the content that follows reasoning trimmed at its start.
 *
 * vLLM's reasoning parsers (qwen3, deepseek_r1) hand on the newlines the
 * template puts around the think tags: reasoning arrives as
 * "\nThe user wants …\n" and content as "\n\nThe capital of Japan is Tokyo.",
 * where an in-process pipeline gives both trimmed. Streamed, the whitespace may
 * come in deltas of its own, so reasoning's trailing whitespace is held until
 * more reasoning follows (and dropped when none does).
 */

export class ReplyTrim {
  private reasoningBegun = false;
  private contentBegun = false;
  /** Whitespace at the end of the reasoning so far: kept only if more reasoning follows. */
  private held = '';

  /** What to pass on of a reasoning delta. */
  reasoning(text: string): string {
    if (!this.reasoningBegun) {
      text = text.replace(/^\s+/, '');
      if (text === '') return '';
      this.reasoningBegun = true;
    }
    const body = text.replace(/\s+$/, '');
    if (body === '') {
      this.held += text;
      return '';
    }
    const out = this.held + body;
    this.held = text.slice(body.length);
    return out;
  }

  /** What to pass on of a content delta: after reasoning, its leading whitespace goes. */
  content(text: string): string {
    if (!this.contentBegun && this.reasoningBegun) {
      text = text.replace(/^\s+/, '');
      if (text === '') return '';
    }
    if (text !== '') this.contentBegun = true;
    return text;
  }
}
