import type { ToolCorpus } from './types.js';

export const pythonicCorpus: ToolCorpus = {
  parser: 'pythonic',
  cases: [
    {
      title: 'one call',
      text: '[get_weather(city="Paris", days=3)]',
      content: null,
      calls: [{ name: 'get_weather', arguments: { city: 'Paris', days: 3 } }],
      warnings: [],
    },
    {
      title: 'two calls with nested literals and tricky strings',
      text: `[search(query='it\\'s "quoted", (paren) [bracket]', filters={"a": [1, 2], 'b': None}, exact=True, ratio=-0.5, tags=("x", "y")), get_time()]`,
      content: null,
      calls: [
        {
          name: 'search',
          arguments: { query: 'it\'s "quoted", (paren) [bracket]', filters: { a: [1, 2], b: null }, exact: true, ratio: -0.5, tags: ['x', 'y'] },
        },
        { name: 'get_time', arguments: {} },
      ],
      warnings: [],
    },
    {
      title: 'plain answer',
      text: 'I cannot call tools for that (sorry).',
      content: 'I cannot call tools for that (sorry).',
      calls: [],
      warnings: [],
    },
    {
      title: 'a list that is not calls',
      text: '[1, 2, 3] are numbers',
      content: '[1, 2, 3] are numbers',
      calls: [],
      warnings: [],
    },
    {
      title: 'wrapped in python_start / python_end',
      text: '<|python_start|>[get_time()]<|python_end|>',
      content: null,
      calls: [{ name: 'get_time', arguments: {} }],
      warnings: [],
    },
    {
      title: 'cut off inside the arguments',
      text: '[get_weather(city="Paris", days=',
      content: null,
      calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
      warnings: [/missing "\)"/],
    },
    {
      title: 'multi-line, triple quotes and separators inside strings',
      text: `[\n  write_file(\n    path="a,b).txt",\n    content="""line1\nline2 with 'quote' and ] and )""",\n  )\n]`,
      content: null,
      calls: [{ name: 'write_file', arguments: { path: 'a,b).txt', content: "line1\nline2 with 'quote' and ] and )" } }],
      warnings: [],
    },
    {
      title: 'unicode and escapes',
      text: `[get_weather(city="S\\u00e3o Paulo 🌞", unit='celsius')]`,
      content: null,
      calls: [{ name: 'get_weather', arguments: { city: 'São Paulo 🌞', unit: 'celsius' } }],
      warnings: [],
    },
    {
      title: 'unknown function',
      text: '[launch(target="moon", count=0x10)]',
      content: null,
      calls: [{ name: 'launch', arguments: { target: 'moon', count: 16 } }],
      warnings: [/unknown tool "launch"/],
    },
    {
      title: 'content after the list',
      text: '[get_time()] Let me know.',
      content: ' Let me know.',
      calls: [{ name: 'get_time', arguments: {} }],
      warnings: [],
    },
    {
      title: 'a value that is not a literal is kept as text',
      text: '[search(query=os.getcwd(), limit=5)]',
      content: null,
      calls: [{ name: 'search', arguments: { query: 'os.getcwd()', limit: 5 } }],
      warnings: [/"query"/],
    },
  ],
};
