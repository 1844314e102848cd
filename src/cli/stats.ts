/** Timing of one request, for the tokens/s line on stderr. */
export class RequestTimer {
  private readonly start = performance.now();
  private firstOutput: number | undefined;

  /** Call on every streamed part that carries generated text. */
  markOutput(): void {
    this.firstOutput ??= performance.now();
  }

  summary(completionTokens: number, finishReason: string): string {
    const end = performance.now();
    const total = (end - this.start) / 1000;
    const parts = [`${completionTokens} tokens in ${total.toFixed(2)} s`];
    // Decode speed: tokens after the first over the time after the first (prefill excluded).
    if (this.firstOutput !== undefined && completionTokens > 1 && end > this.firstOutput) {
      parts.push(`${((completionTokens - 1) / ((end - this.firstOutput) / 1000)).toFixed(1)} tokens/s`);
      parts.push(`first token ${Math.round(this.firstOutput - this.start)} ms`);
    } else if (total > 0) {
      parts.push(`${(completionTokens / total).toFixed(1)} tokens/s`);
    }
    parts.push(`finish: ${finishReason}`);
    return parts.join(', ');
  }
}
