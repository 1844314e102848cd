/** Per-request sampling parameters, validated at the API boundary (src/pipeline/options.ts). */
export interface SamplingParams {
  /** 0 = greedy (argmax). */
  readonly temperature: number;
  /** 0 = off. */
  readonly topK: number;
  /** 1 = off. */
  readonly topP: number;
  /** 0 = off. Tokens below minP * max probability are dropped. */
  readonly minP: number;
  /** 1 = off. Divides positive / multiplies negative logits of tokens seen in prompt or output. */
  readonly repetitionPenalty: number;
  /** 0 = off. Subtracted once from logits of tokens already generated. */
  readonly presencePenalty: number;
  /** 0 = off. Subtracted per occurrence from logits of tokens already generated. */
  readonly frequencyPenalty: number;
  /** Seed of this request's own random stream: same seed, same output, alone or batched. */
  readonly seed: number;
  /** Top-n log probabilities to return per generated token (0 = none). */
  readonly logprobs: number;
}

export const GREEDY: SamplingParams = {
  temperature: 0,
  topK: 0,
  topP: 1,
  minP: 0,
  repetitionPenalty: 1,
  presencePenalty: 0,
  frequencyPenalty: 0,
  seed: 0,
  logprobs: 0,
};
