import type { ExpectedCall } from './types.js';

/** Reasoning and tool parsers chained as in a chat response. */
export interface ChainCase {
  title: string;
  reasoningParser: 'qwen3' | 'deepseek_r1';
  toolParser: string;
  startsInReasoning?: boolean;
  text: string;
  reasoning: string | null;
  content: string | null;
  calls: ExpectedCall[];
}

export const chainCases: ChainCase[] = [
  {
    title: 'qwen3 reasoning then a hermes call',
    reasoningParser: 'qwen3',
    toolParser: 'hermes',
    text: '<think>\nThe user wants the weather in Paris.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    reasoning: 'The user wants the weather in Paris.',
    content: null,
    calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
  },
  {
    title: 'qwen3: a qwen3coder call inside an unclosed think block is not lost',
    reasoningParser: 'qwen3',
    toolParser: 'qwen3coder',
    startsInReasoning: true,
    text: 'I should call the tool.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nKyiv\n</parameter>\n</function>\n</tool_call>',
    reasoning: 'I should call the tool.',
    content: null,
    calls: [{ name: 'get_weather', arguments: { city: 'Kyiv' } }],
  },
  {
    title: 'qwen3: a hermes call written inside a closed think block is reasoning, as OVMS reads it',
    reasoningParser: 'qwen3',
    toolParser: 'hermes',
    text: '<think>Now we think <tool_call>\n{"name": "get_time", "arguments": {}}</tool_call>\n</think>No call.',
    reasoning: 'Now we think <tool_call>\n{"name": "get_time", "arguments": {}}</tool_call>',
    content: 'No call.',
    calls: [],
  },
  {
    title: 'qwen3 reasoning, content, then qwen3coder calls',
    reasoningParser: 'qwen3',
    toolParser: 'qwen3coder',
    text:
      '<think>\nTwo calls needed.\n</think>\n\nOn it.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nRome\n</parameter>\n</function>\n</tool_call>\n' +
      '<tool_call>\n<function=get_time>\n</function>\n</tool_call>',
    reasoning: 'Two calls needed.',
    content: 'On it.\n',
    calls: [
      { name: 'get_weather', arguments: { city: 'Rome' } },
      { name: 'get_time', arguments: {} },
    ],
  },
  {
    title: 'deepseek_r1 reasoning then deepseek_v3 calls',
    reasoningParser: 'deepseek_r1',
    toolParser: 'deepseek_v3',
    text:
      'Need the weather.\n</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Lima"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    reasoning: 'Need the weather.',
    content: null,
    calls: [{ name: 'get_weather', arguments: { city: 'Lima' } }],
  },
  {
    title: 'reasoning and plain content, no calls',
    reasoningParser: 'qwen3',
    toolParser: 'qwen3coder',
    text: '<think>\nEasy.\n</think>\n\nIt is 4 <b>exactly</b>.',
    reasoning: 'Easy.',
    content: 'It is 4 <b>exactly</b>.',
    calls: [],
  },
];
