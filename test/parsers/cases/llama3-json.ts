import type { ToolCorpus } from './types.js';

export const llama3JsonCorpus: ToolCorpus = {
  parser: 'llama3_json',
  cases: [
    {
      title: 'python_tag and "parameters"',
      text: '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris", "days": 2}}',
      content: null,
      calls: [{ name: 'get_weather', arguments: { city: 'Paris', days: 2 } }],
      warnings: [],
    },
    {
      title: 'several calls separated by ";" without the tag',
      text: '{"name": "get_weather", "parameters": {"city": "Paris"}}; {"name": "get_time", "arguments": {}}',
      content: null,
      calls: [
        { name: 'get_weather', arguments: { city: 'Paris' } },
        { name: 'get_time', arguments: {} },
      ],
      warnings: [],
    },
    {
      title: 'plain answer',
      text: 'The answer is 42; {not a call}.',
      content: 'The answer is 42; {not a call}.',
      calls: [],
      warnings: [],
    },
    {
      title: 'a JSON answer without a name is content',
      text: '{"answer": 42, "unit": "m"}',
      content: '{"answer": 42, "unit": "m"}',
      calls: [],
      warnings: [/has no "name"/],
    },
    {
      title: 'a JSON answer with a "name" but no arguments is content',
      text: '{"name": "Alice", "age": 3}',
      content: '{"name": "Alice", "age": 3}',
      calls: [],
      warnings: [/has no "arguments"/],
    },
    {
      title: 'behind the tag, a call needs no arguments',
      text: '<|python_tag|>{"name": "get_time"}',
      content: null,
      calls: [{ name: 'get_time', arguments: {} }],
      warnings: [],
    },
    {
      title: 'content, then python_tag with nested JSON, quotes and braces',
      text: String.raw`Let me look.<|python_tag|>{"name": "search", "arguments": {"query": "x \"y\" {z}; w", "filters": {"a": [1, {"b": null}]}}}`,
      content: 'Let me look.',
      calls: [{ name: 'search', arguments: { query: 'x "y" {z}; w', filters: { a: [1, { b: null }] } } }],
      warnings: [],
    },
    {
      title: 'cut off inside a string',
      text: '{"name": "search", "parameters": {"query": "unfinished',
      content: null,
      calls: [{ name: 'search', arguments: { query: 'unfinished' } }],
      warnings: [/cut off/],
    },
    {
      title: 'text after the call',
      text: '{"name": "get_time", "parameters": {}} and then some text',
      content: ' and then some text',
      calls: [{ name: 'get_time', arguments: {} }],
      warnings: [],
    },
    {
      title: 'unicode',
      text: '  {"name": "get_weather", "parameters": {"city": "Zürich 🌧 東京"}}  ',
      content: null,
      calls: [{ name: 'get_weather', arguments: { city: 'Zürich 🌧 東京' } }],
      warnings: [],
    },
    {
      title: 'an unquoted value breaks the JSON; the call is kept up to there',
      text: '{"name": "get_weather", "parameters": {"city": Paris}}',
      content: '}}',
      calls: [{ name: 'get_weather', arguments: { city: null } }],
      warnings: [/unexpected word "Paris"/],
    },
    {
      title: 'unknown tool',
      text: '<|python_tag|>{"name": "brew_coffee", "parameters": {"cups": 2}}',
      content: null,
      calls: [{ name: 'brew_coffee', arguments: { cups: 2 } }],
      warnings: [/unknown tool/],
    },
  ],
};
