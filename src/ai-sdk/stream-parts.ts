/**
 * weft's stream parts as the AI SDK's (LanguageModelV3StreamPart).
 *
 * weft streams bare deltas; the spec wants blocks: text-start / -delta / -end,
 * reasoning-start / -delta / -end, tool-input-start / -delta / -end followed by
 * the tool-call. Invariant: at most one text or reasoning block is open at a
 * time, and every block that starts also ends (before the finish part at the
 * latest), so a consumer that keys state on block ids never sees a dangling one.
 */

import type {
  LanguageModelV3FinishReason,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
  SharedV3ProviderMetadata,
} from '@ai-sdk/provider';
import type { FinishReason, StreamPart, Usage } from '../pipeline/stream-parts.js';
import type { ToolRequirement } from './call-options.js';

export class StreamPartTranslator {
  private open: { readonly kind: 'text' | 'reasoning'; readonly id: string } | undefined;
  private blocks = 0;
  /** weft's per-reply call index -> the tool call id handed to the AI SDK. */
  private readonly toolInputs = new Map<number, { readonly id: string; ended: boolean }>();
  private readonly calledTools: string[] = [];

  /** `callIdPrefix` makes tool call ids unique across replies (weft numbers calls per reply). */
  constructor(
    private readonly callIdPrefix: string,
    private readonly requirement: ToolRequirement = undefined,
  ) {}

  translate(part: StreamPart): LanguageModelV3StreamPart[] {
    const out: LanguageModelV3StreamPart[] = [];
    switch (part.type) {
      case 'text-delta':
      case 'reasoning-delta': {
        const kind = part.type === 'text-delta' ? 'text' : 'reasoning';
        if (this.open?.kind !== kind) {
          this.closeBlock(out);
          this.open = { kind, id: `${kind}-${this.blocks++}` };
          out.push({ type: `${kind}-start`, id: this.open.id });
        }
        out.push({ type: `${kind}-delta`, id: this.open.id, delta: part.text });
        break;
      }
      case 'tool-call-start':
        this.closeBlock(out);
        out.push({ type: 'tool-input-start', id: this.startToolInput(part.index), toolName: part.name });
        break;
      case 'tool-call-delta': {
        const input = this.toolInputs.get(part.index);
        if (input !== undefined && !input.ended) out.push({ type: 'tool-input-delta', id: input.id, delta: part.argumentsDelta });
        break;
      }
      case 'tool-call': {
        this.closeBlock(out);
        let input = this.toolInputs.get(part.index);
        if (input === undefined) {
          out.push({ type: 'tool-input-start', id: this.startToolInput(part.index), toolName: part.name });
          input = this.toolInputs.get(part.index)!;
        }
        if (!input.ended) out.push({ type: 'tool-input-end', id: input.id });
        input.ended = true;
        this.calledTools.push(part.name);
        out.push({ type: 'tool-call', toolCallId: input.id, toolName: part.name, input: JSON.stringify(part.arguments) });
        break;
      }
      case 'token':
        break;
      case 'finish':
        this.closeBlock(out);
        // A call cut short (e.g. by maxOutputTokens) ends its input without a tool-call.
        for (const input of this.toolInputs.values()) {
          if (!input.ended) out.push({ type: 'tool-input-end', id: input.id });
          input.ended = true;
        }
        out.push({
          type: 'finish',
          finishReason: toFinishReason(part.finishReason),
          usage: toUsage(part.usage),
          providerMetadata: this.metadata(part.finishReason, part.usage, part.warnings ?? []),
        });
        break;
    }
    return out;
  }

  /** Whether the reply honoured toolChoice "required" / a named tool (undefined: nothing was required). */
  toolChoiceMet(): boolean | undefined {
    if (this.requirement === undefined) return undefined;
    if (this.requirement.kind === 'any') return this.calledTools.length > 0;
    const name = this.requirement.toolName;
    return this.calledTools.length > 0 && this.calledTools.every((called) => called === name);
  }

  private startToolInput(index: number): string {
    const id = `${this.callIdPrefix}-${index}`;
    this.toolInputs.set(index, { id, ended: false });
    return id;
  }

  private closeBlock(out: LanguageModelV3StreamPart[]): void {
    if (this.open === undefined) return;
    out.push({ type: `${this.open.kind}-end`, id: this.open.id });
    this.open = undefined;
  }

  private metadata(finishReason: FinishReason, usage: Usage, warnings: readonly string[]): SharedV3ProviderMetadata {
    const met = this.toolChoiceMet();
    return {
      weft: {
        finishReason,
        cachedPromptTokens: usage.cachedPromptTokens,
        ...(warnings.length > 0 && { warnings: [...warnings] }),
        ...(met !== undefined && { toolChoiceMet: met }),
      },
    };
  }
}

export function toFinishReason(reason: FinishReason): LanguageModelV3FinishReason {
  const unified = ({ stop: 'stop', length: 'length', tool_calls: 'tool-calls', error: 'error', aborted: 'other' } as const)[reason];
  return { unified: unified ?? 'other', raw: reason };
}

/** weft counts every prompt token it computed or found in its prefix cache; it writes no separate cache. */
export function toUsage(usage: Usage): LanguageModelV3Usage {
  return {
    inputTokens: {
      total: usage.promptTokens,
      noCache: usage.promptTokens - usage.cachedPromptTokens,
      cacheRead: usage.cachedPromptTokens,
      cacheWrite: undefined,
    },
    outputTokens: { total: usage.completionTokens, text: undefined, reasoning: undefined },
    raw: { ...usage },
  };
}
