import type { ToolCorpus } from './types.js';

export const hermesCorpus: ToolCorpus = {
  parser: 'hermes',
  cases: [
    {
      title: 'one call after content',
      text: 'I will check the weather.\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>',
      content: 'I will check the weather.\n\n',
      calls: [{ name: 'get_weather', arguments: { city: 'Paris', days: 3 } }],
      warnings: [],
    },
    {
      title: 'several calls with nested objects and arrays',
      text:
        '<tool_call>\n{"name": "search", "arguments": {"query": "llm", "filters": {"year": [2023, 2024], "lang": {"in": ["en", "fr"]}}, "exact": true, "ratio": -1.5e-3, "note": null}}\n</tool_call>\n' +
        '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>',
      content: null,
      calls: [
        {
          name: 'search',
          arguments: { query: 'llm', filters: { year: [2023, 2024], lang: { in: ['en', 'fr'] } }, exact: true, ratio: -1.5e-3, note: null },
        },
        { name: 'get_time', arguments: {} },
      ],
      warnings: [],
    },
    {
      title: 'strings with tags, quotes, braces, escapes and unicode',
      text: String.raw`<tool_call>{"name": "write_file", "arguments": {"path": "a \"b\" {c}.txt", "content": "<tool_call>x</tool_call> }{ ][ \\ \u00e9 日本語 🎉\n\ud83d\ude00"}}</tool_call>`,
      content: null,
      calls: [
        {
          name: 'write_file',
          arguments: { path: 'a "b" {c}.txt', content: '<tool_call>x</tool_call> }{ ][ \\ é 日本語 🎉\n😀' },
        },
      ],
      warnings: [],
    },
    {
      title: 'content after the call',
      text: '<tool_call>{"name":"get_time","arguments":{}}</tool_call>\nDone, checking.',
      content: '\nDone, checking.',
      calls: [{ name: 'get_time', arguments: {} }],
      warnings: [],
    },
    {
      title: 'name after the arguments, and "parameters"',
      text: '<tool_call>{"arguments": {"city": "Oslo"}, "name": "get_weather"}</tool_call><tool_call>{"name": "get_weather", "parameters": {"city": "Bergen"}}</tool_call>',
      content: null,
      calls: [
        { name: 'get_weather', arguments: { city: 'Oslo' } },
        { name: 'get_weather', arguments: { city: 'Bergen' } },
      ],
      warnings: [],
    },
    {
      title: 'arguments encoded as a JSON string',
      text: String.raw`<tool_call>{"name": "get_weather", "arguments": "{\"city\": \"Rome\", \"days\": 1}"}</tool_call>`,
      content: null,
      calls: [{ name: 'get_weather', arguments: { city: 'Rome', days: 1 } }],
      warnings: [],
    },
    {
      title: 'parameterless tool without arguments',
      text: '<tool_call>{"name": "get_time"}</tool_call>',
      content: null,
      calls: [{ name: 'get_time', arguments: {} }],
      warnings: [],
    },
    {
      title: 'the last block without its closing tag is fine',
      text: 'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n',
      content: 'Checking.\n',
      calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
      warnings: [],
    },
    {
      title: 'JSON cut off in the middle',
      text: '<tool_call>{"name": "search", "arguments": {"query": "cats", "tags": ["a", "b',
      content: null,
      calls: [{ name: 'search', arguments: { query: 'cats', tags: ['a', 'b'] } }],
      warnings: [/cut off/],
    },
    {
      title: 'malformed JSON without a name stays content',
      text: 'Hi <tool_call>{"nam": oops}</tool_call> bye',
      content: 'Hi <tool_call>{"nam": oops}</tool_call> bye',
      calls: [],
      warnings: [/malformed tool call/],
    },
    {
      title: 'broken JSON after the name keeps the call',
      text: '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris" "days": 2}}</tool_call>',
      content: null,
      calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
      warnings: [/expected "," or a closing bracket.*; ignored "\\"days\\": 2\}\}"/],
    },
    {
      title: 'unknown function name is kept, with a warning',
      text: '<tool_call>{"name": "launch_rocket", "arguments": {"target": "moon"}}</tool_call>',
      content: null,
      calls: [{ name: 'launch_rocket', arguments: { target: 'moon' } }],
      warnings: [/unknown tool "launch_rocket"/],
    },
    {
      title: 'text that only looks like the start of a tag',
      text: 'a < b and <tool_ca is not a tag <tool',
      content: 'a < b and <tool_ca is not a tag <tool',
      calls: [],
      warnings: [],
    },
    {
      title: 'an extra brace after the object',
      text: '<tool_call>{"name": "get_time", "arguments": {}}}</tool_call>',
      content: null,
      calls: [{ name: 'get_time', arguments: {} }],
      warnings: [/unexpected text/],
    },
    {
      title: 'a JSON value that is not an object stays content',
      text: '<tool_call>["get_time"]</tool_call>',
      content: '<tool_call>["get_time"]</tool_call>',
      calls: [],
      warnings: [/not a JSON object/],
    },
    {
      title: 'valid and invalid blocks mixed: the valid ones are calls, the invalid one stays content',
      text:
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome", "days": 42}}</tool_call>' +
        '<tool_call>{"tool_name": "search", "arguments": {"query": "data", "exact": true}}</tool_call>' +
        '<tool_call>{"name": "get_time", "arguments": {"key": "value"}}</tool_call>',
      content: '<tool_call>{"tool_name": "search", "arguments": {"query": "data", "exact": true}}</tool_call>',
      calls: [
        { name: 'get_weather', arguments: { city: 'Rome', days: 42 } },
        { name: 'get_time', arguments: { key: 'value' } },
      ],
      warnings: [/malformed tool call as text \(it has no "name"\)/],
    },
    {
      title: 'valid and invalid blocks mixed, the last one not closed',
      text:
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome", "days": 42}}</tool_call>' +
        '<tool_call>{"tool_name": "search", "arguments": {"query": "data", "exact": true}}</tool_call>' +
        '<tool_call>{"name": "get_time", "arguments": {"key": "value"}}',
      content: '<tool_call>{"tool_name": "search", "arguments": {"query": "data", "exact": true}}</tool_call>',
      calls: [
        { name: 'get_weather', arguments: { city: 'Rome', days: 42 } },
        { name: 'get_time', arguments: { key: 'value' } },
      ],
      warnings: [/malformed tool call as text \(it has no "name"\)/],
    },
    {
      title: 'invalid JSON in a whole-text parse: the object lacks its closing brace',
      text: '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}',
      content: null,
      calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
      warnings: [/cut off/],
    },
    {
      title: 'an invalid block before the name is content, the next call still counts',
      text: 'A <tool_call>{oops}</tool_call> B <tool_call>{"name": "get_time"}</tool_call>',
      content: 'A <tool_call>{oops}</tool_call> B ',
      calls: [{ name: 'get_time', arguments: {} }],
      warnings: [/malformed tool call/],
    },
  ],
};
