import type { ToolCorpus } from './types.js';

export const mistralCorpus: ToolCorpus = {
  parser: 'mistral',
  cases: [
    {
      title: 'pre-v11 array of two calls',
      text: '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {}}]',
      content: null,
      calls: [
        { name: 'get_weather', arguments: { city: 'Paris' } },
        { name: 'get_time', arguments: {} },
      ],
      warnings: [],
    },
    {
      title: 'v11 calls, each behind its own marker',
      text: '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "days": 5}[TOOL_CALLS]search[ARGS]{"query": "a [ARGS] b [TOOL_CALLS]", "filters": {"x": [1, 2]}}',
      content: null,
      calls: [
        { name: 'get_weather', arguments: { city: 'Paris', days: 5 } },
        { name: 'search', arguments: { query: 'a [ARGS] b [TOOL_CALLS]', filters: { x: [1, 2] } } },
      ],
      warnings: [],
    },
    {
      title: 'content before a v11 call',
      text: 'Sure, let me check.[TOOL_CALLS]get_time[ARGS]{}',
      content: 'Sure, let me check.',
      calls: [{ name: 'get_time', arguments: {} }],
      warnings: [],
    },
    {
      title: 'v11 call with a call id',
      text: '[TOOL_CALLS]get_weather[CALL_ID]abc123XYZ[ARGS]{"city": "Lyon"}',
      content: null,
      calls: [{ name: 'get_weather', arguments: { city: 'Lyon' } }],
      warnings: [],
    },
    {
      title: 'cut off after the call id',
      text: 'Let me see.[TOOL_CALLS]get_time[CALL_ID]a1b2',
      content: 'Let me see.',
      calls: [{ name: 'get_time', arguments: {} }],
      warnings: [/missing \[ARGS\]/],
    },
    {
      title: 'cut off right after the name',
      text: '[TOOL_CALLS]get_time',
      content: null,
      calls: [{ name: 'get_time', arguments: {} }],
      warnings: [/missing \[ARGS\]/],
    },
    {
      title: 'a name with a space is not a name',
      text: '[TOOL_CALLS]get time[ARGS]{}',
      content: '[TOOL_CALLS]get time[ARGS]{}',
      calls: [],
      warnings: [/malformed/],
    },
    {
      title: 'array cut off',
      text: '[TOOL_CALLS][{"name": "search", "arguments": {"query": "café", "tags": ["x"',
      content: null,
      calls: [{ name: 'search', arguments: { query: 'café', tags: ['x'] } }],
      warnings: [/cut off/],
    },
    {
      title: 'not a call after the marker',
      text: '[TOOL_CALLS]not a name here',
      content: '[TOOL_CALLS]not a name here',
      calls: [],
      warnings: [/malformed/],
    },
    {
      title: 'array element without a name',
      text: '[TOOL_CALLS][{"arguments": {}}, {"name": "get_time", "arguments": {}}]',
      content: null,
      calls: [{ name: 'get_time', arguments: {} }],
      warnings: [/without a "name"/],
    },
    {
      title: 'content after a v11 call',
      text: '[TOOL_CALLS]get_time[ARGS]{} Done.',
      content: ' Done.',
      calls: [{ name: 'get_time', arguments: {} }],
      warnings: [],
    },
    {
      title: 'v11 arguments with quotes, braces and unicode',
      text: String.raw`[TOOL_CALLS]write_file[ARGS]{"path": "ü/ß.txt", "content": "}{\"[ARGS]\"\t🎉"}`,
      content: null,
      calls: [{ name: 'write_file', arguments: { path: 'ü/ß.txt', content: '}{"[ARGS]"\t🎉' } }],
      warnings: [],
    },
    {
      title: 'v11 broken JSON keeps the call, the rest is content',
      text: '[TOOL_CALLS]get_weather[ARGS]{"city": "Nice", oops} ok',
      content: 'oops} ok',
      calls: [{ name: 'get_weather', arguments: { city: 'Nice' } }],
      warnings: [/expected a key/],
    },
  ],
};
