import type { ToolCorpus } from './types.js';

const B = '<｜tool▁calls▁begin｜>';
const E = '<｜tool▁calls▁end｜>';
const CB = '<｜tool▁call▁begin｜>';
const CE = '<｜tool▁call▁end｜>';
const SEP = '<｜tool▁sep｜>';

export const deepseekV3Corpus: ToolCorpus = {
  parser: 'deepseek_v3',
  cases: [
    {
      title: 'one call',
      text: `${B}${CB}function${SEP}get_weather\n\`\`\`json\n{"city": "Paris"}\n\`\`\`${CE}${E}`,
      content: null,
      calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
      warnings: [],
    },
    {
      title: 'two calls after content, markers and fences inside strings',
      text:
        `Checking both.${B}${CB}function${SEP}get_weather\n\`\`\`json\n{"city": "Tokyo", "days": 2}\n\`\`\`${CE}\n` +
        `${CB}function${SEP}search\n\`\`\`json\n{"query": "\`\`\`json inside", "filters": {"k": ["${CE}"]}}\n\`\`\`${CE}${E}`,
      content: 'Checking both.',
      calls: [
        { name: 'get_weather', arguments: { city: 'Tokyo', days: 2 } },
        { name: 'search', arguments: { query: '```json inside', filters: { k: [CE] } } },
      ],
      warnings: [],
    },
    {
      title: 'V3.1 spelling',
      text: `${B}${CB}get_time${SEP}{}${CE}${CB}get_weather${SEP}{"city": "Kyiv"}${CE}${E}`,
      content: null,
      calls: [
        { name: 'get_time', arguments: {} },
        { name: 'get_weather', arguments: { city: 'Kyiv' } },
      ],
      warnings: [],
    },
    {
      title: 'cut off',
      text: `${B}${CB}function${SEP}search\n\`\`\`json\n{"query": "trunc`,
      content: null,
      calls: [{ name: 'search', arguments: { query: 'trunc' } }],
      warnings: [/cut off/],
    },
    {
      title: 'malformed JSON keeps the call',
      text: `${B}${CB}function${SEP}get_weather\n\`\`\`json\n{"city": }\n\`\`\`${CE}${E} ok`,
      content: ' ok',
      calls: [{ name: 'get_weather', arguments: { city: null } }],
      warnings: [/expected a value/],
    },
    {
      title: 'content after the calls',
      text: `${B}${CB}function${SEP}get_time\n\`\`\`json\n{}\n\`\`\`${CE}${E}\nAnything else? 😀`,
      content: '\nAnything else? 😀',
      calls: [{ name: 'get_time', arguments: {} }],
      warnings: [],
    },
    {
      title: 'a call without a separator stays content',
      text: `${B}${CB}oops${CE}${E}`,
      content: `${CB}oops${CE}`,
      calls: [],
      warnings: [/malformed/],
    },
  ],
};
