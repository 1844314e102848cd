import { describe, expect, it } from 'vitest';
import { createReasoningParser, detectStartsInReasoning } from '../../src/parsers/index.js';
import { reasoningCases } from './cases/reasoning.js';
import { chars, runStream } from './helpers.js';

describe('reasoning parsers', () => {
  for (const c of reasoningCases) {
    it(`${c.parser}: ${c.title}`, () => {
      const parser = createReasoningParser(c.parser, c.startsInReasoning === undefined ? {} : { startsInReasoning: c.startsInReasoning });
      const result = parser.parse(c.text);
      expect(result.reasoning).toBe(c.reasoning);
      expect(result.content).toBe(c.content);
      if (c.warnings.length === 0) expect(result.warnings).toStrictEqual([]);
      for (const pattern of c.warnings) expect(result.warnings.some((w) => pattern.test(w))).toBe(true);

      const events = runStream(parser.stream(), chars(c.text));
      const joined = (type: string) => events.flatMap((e) => (e.type === type && 'text' in e ? [e.text] : [])).join('') || null;
      expect(joined('reasoning')).toBe(c.reasoning);
      expect(joined('content')).toBe(c.content);
    });
  }

  it('streams reasoning without waiting for the closing tag', () => {
    const stream = createReasoningParser('qwen3').stream();
    expect(stream.push('<think>\nStep one')).toStrictEqual([{ type: 'reasoning', text: 'Step one' }]);
    expect(stream.push(', step two.\n</th')).toStrictEqual([{ type: 'reasoning', text: ', step two.' }]);
    expect(stream.push('ink>\n\nDone')).toStrictEqual([{ type: 'content', text: 'Done' }]);
    expect(stream.end()).toStrictEqual([]);
  });

  it('detects a prompt that ends inside an open think block', () => {
    expect(detectStartsInReasoning('<|im_start|>assistant\n<think>\n')).toBe(true);
    expect(detectStartsInReasoning('<|im_start|>assistant\n<think>\n\n</think>\n\n')).toBe(false);
    expect(detectStartsInReasoning('<|im_start|>user\nwhat is <think>?<|im_end|>\n<|im_start|>assistant\n')).toBe(false);
    expect(detectStartsInReasoning('<｜Assistant｜><think>\n')).toBe(true);
  });
});
