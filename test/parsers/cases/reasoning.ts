export interface ReasoningCase {
  title: string;
  parser: 'qwen3' | 'deepseek_r1';
  startsInReasoning?: boolean;
  text: string;
  reasoning: string | null;
  content: string | null;
  warnings: RegExp[];
}

export const reasoningCases: ReasoningCase[] = [
  {
    title: 'think block then answer',
    parser: 'qwen3',
    text: '<think>\nLet me think.\n\nTwo plus two is four.\n</think>\n\nThe answer is 4.',
    reasoning: 'Let me think.\n\nTwo plus two is four.',
    content: 'The answer is 4.',
    warnings: [],
  },
  {
    title: 'the template opened the block',
    parser: 'qwen3',
    startsInReasoning: true,
    text: 'I should add.\n</think>\n\n4',
    reasoning: 'I should add.',
    content: '4',
    warnings: [],
  },
  {
    title: 'no closing tag: everything is reasoning',
    parser: 'qwen3',
    text: '<think>\nhmm, still thinking about <b>tags</b> and </thi',
    reasoning: 'hmm, still thinking about <b>tags</b> and </thi',
    content: null,
    warnings: [/not closed/],
  },
  {
    title: 'no think block at all',
    parser: 'qwen3',
    text: 'Just an answer with </think> inside.',
    reasoning: null,
    content: 'Just an answer with </think> inside.',
    warnings: [],
  },
  {
    title: 'qwen3: a <tool_call><function=...> inside an unclosed think block ends reasoning',
    parser: 'qwen3',
    text: '<think>\nI need the weather.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>',
    reasoning: 'I need the weather.',
    content: '<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>',
    warnings: [],
  },
  {
    title: 'qwen3: a <tool_call> mentioned in reasoning without <function= stays reasoning (vLLM and OVMS)',
    parser: 'qwen3',
    text: '<think>Now we are thinking <tool_call>\n{"name": "get_time", "arguments": {"a": "val{{{ue1"}}</tool_call>\n</think>Done.',
    reasoning: 'Now we are thinking <tool_call>\n{"name": "get_time", "arguments": {"a": "val{{{ue1"}}</tool_call>',
    content: 'Done.',
    warnings: [],
  },
  {
    title: 'qwen3: the </think> after an implicit end closes nothing and is dropped',
    parser: 'qwen3',
    startsInReasoning: true,
    text: 'Plan.\n<tool_call> <function=get_time></function></tool_call>\n</think>\nok </think>',
    reasoning: 'Plan.',
    content: '<tool_call> <function=get_time></function></tool_call>\n\nok </think>',
    warnings: [],
  },
  {
    title: 'qwen3: an unclosed block ending right after <tool_call> is reasoning',
    parser: 'qwen3',
    text: '<think>maybe call <tool_call>  ',
    reasoning: 'maybe call <tool_call>',
    content: null,
    warnings: [/not closed/],
  },
  {
    title: 'deepseek_r1 starts inside the block by default',
    parser: 'deepseek_r1',
    text: 'Thinking here 🤔.</think>Answer.',
    reasoning: 'Thinking here 🤔.',
    content: 'Answer.',
    warnings: [],
  },
  {
    title: 'deepseek_r1 re-emitting <think> is fine',
    parser: 'deepseek_r1',
    text: '<think>\nabc\n</think>\nxyz\n',
    reasoning: 'abc',
    content: 'xyz\n',
    warnings: [],
  },
  {
    title: 'deepseek_r1 keeps <tool_call> as reasoning text',
    parser: 'deepseek_r1',
    text: 'use <tool_call> maybe</think>done',
    reasoning: 'use <tool_call> maybe',
    content: 'done',
    warnings: [],
  },
  {
    title: 'deepseek_r1: a tool-call block inside an unclosed think block ends reasoning',
    parser: 'deepseek_r1',
    text: 'Call it.\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    reasoning: 'Call it.',
    content: '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    warnings: [],
  },
  {
    title: 'empty think block (thinking disabled)',
    parser: 'qwen3',
    text: '<think>\n\n</think>\n\nHello',
    reasoning: null,
    content: 'Hello',
    warnings: [],
  },
  {
    title: 'partial tags that never complete',
    parser: 'qwen3',
    text: '<thin and <think',
    reasoning: null,
    content: '<thin and <think',
    warnings: [],
  },
  {
    title: 'deepseek_r1 told the output does not start in reasoning',
    parser: 'deepseek_r1',
    startsInReasoning: false,
    text: 'Plain answer.',
    reasoning: null,
    content: 'Plain answer.',
    warnings: [],
  },
];
