import type { CliPipeline } from './pipeline-port.js';

const THINK = '<think>';
/** The parser used when a model looks like it reasons in <think> blocks (Qwen3, DeepSeek-R1 and their kin). */
export const DEFAULT_REASONING_PARSER = 'qwen3';

/**
 * Why this model's output probably contains <think>…</think>, or undefined.
 * Two cheap signs: a `<think>` token in the vocabulary, or a chat template whose
 * generation prompt opens a think block. Neither can load or run anything, and a
 * template that cannot render this probe just counts as "no sign".
 */
export function thinkingSign(pipeline: CliPipeline): string | undefined {
  if (pipeline.tokenizer?.tokenToId(THINK) !== undefined) return 'its tokenizer has a <think> token';
  try {
    const prompt = pipeline.chatTemplate?.render([{ role: 'user', content: 'Hi' }], { addGenerationPrompt: true });
    if (prompt?.includes(THINK)) return 'its chat template writes <think>';
  } catch {
    // Some templates insist on a system message or other shapes; then we simply do not guess.
  }
  return undefined;
}
