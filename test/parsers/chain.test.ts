import { describe, expect, it } from 'vitest';
import { createParserChain, createReasoningParser } from '../../src/parsers/index.js';
import { createToolParser } from '../../src/tool-formats/index.js';
import { chainCases } from './cases/chain.js';
import { chars, checkEventContract, runStream, TOOLS } from './helpers.js';

describe('reasoning and tool parsers chained', () => {
  for (const c of chainCases) {
    it(c.title, () => {
      const parser = createParserChain({
        reasoning: createReasoningParser(c.reasoningParser, c.startsInReasoning === undefined ? {} : { startsInReasoning: c.startsInReasoning }),
        tool: createToolParser(c.toolParser, { tools: TOOLS }),
      });
      const result = parser.parse(c.text);
      expect(result.reasoning).toBe(c.reasoning);
      expect(result.content).toBe(c.content);
      expect(result.toolCalls.map(({ name, arguments: args }) => ({ name, arguments: args }))).toStrictEqual(c.calls);
      expect(result.warnings).toStrictEqual([]);
      const events = runStream(parser.stream(), chars(c.text));
      expect(checkEventContract(events)).toStrictEqual(result.toolCalls);
    });
  }

  it('works with only one of the two parsers, or none', () => {
    const text = '<think>x</think><tool_call>{"name": "get_time"}</tool_call>';
    const toolOnly = createParserChain({ tool: createToolParser('hermes') }).parse(text);
    expect(toolOnly.content).toBe('<think>x</think>');
    expect(toolOnly.toolCalls).toHaveLength(1);
    const reasoningOnly = createParserChain({ reasoning: createReasoningParser('qwen3') }).parse(text);
    expect(reasoningOnly).toMatchObject({ reasoning: 'x', content: '<tool_call>{"name": "get_time"}</tool_call>', toolCalls: [] });
    expect(createParserChain({}).parse(text)).toMatchObject({ reasoning: null, content: text, toolCalls: [] });
  });
});
