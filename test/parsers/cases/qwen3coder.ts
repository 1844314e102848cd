import type { ToolCorpus } from './types.js';

export const qwen3CoderCorpus: ToolCorpus = {
  parser: 'qwen3coder',
  cases: [
    {
      title: 'one call with a string and an integer',
      text: '<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>',
      content: null,
      calls: [{ name: 'get_weather', arguments: { city: 'Paris', days: 3 } }],
      warnings: [],
    },
    {
      title: 'values typed by the schema',
      text:
        '<tool_call>\n<function=search>\n<parameter=query>\n12345\n</parameter>\n<parameter=zip>\n007\n</parameter>\n' +
        '<parameter=limit>\n10\n</parameter>\n<parameter=ratio>\n0.25\n</parameter>\n<parameter=exact>\nTrue\n</parameter>\n' +
        '<parameter=note>\nNone\n</parameter>\n<parameter=filters>\n{"year": 2024, "tags": ["a"]}\n</parameter>\n' +
        "<parameter=tags>\n['x', \"y\"]\n</parameter>\n<parameter=mode>\n1\n</parameter>\n</function>\n</tool_call>",
      content: null,
      calls: [
        {
          name: 'search',
          arguments: {
            query: '12345',
            zip: '007',
            limit: 10,
            ratio: 0.25,
            exact: true,
            note: null,
            filters: { year: 2024, tags: ['a'] },
            tags: ['x', 'y'],
            mode: 1,
          },
        },
      ],
      warnings: [],
    },
    {
      title: 'missing </parameter> before </function> keeps the last parameter',
      text: '<tool_call>\n<function=get_weather>\n<parameter=city>\nBerlin\n</function>\n</tool_call>',
      content: null,
      calls: [{ name: 'get_weather', arguments: { city: 'Berlin' } }],
      warnings: [/missing <\/parameter>/],
    },
    {
      title: 'output ends inside a value',
      text: '<tool_call>\n<function=write_file>\n<parameter=path>\n/tmp/a.txt\n</parameter>\n<parameter=content>\nhello\nworld',
      content: null,
      calls: [{ name: 'write_file', arguments: { path: '/tmp/a.txt', content: 'hello\nworld' } }],
      warnings: [/missing <\/parameter>/, /missing <\/function>/],
    },
    {
      title: 'multi-line string with markup, quotes, braces and unicode',
      text:
        '<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/x.html\n</parameter>\n<parameter=content>\n' +
        '<div class="x">{ \'q\' } \\n</div>\n\tindent ünï 🎉\n\n</parameter>\n</function>\n</tool_call>',
      content: null,
      calls: [{ name: 'write_file', arguments: { path: 'src/x.html', content: '<div class="x">{ \'q\' } \\n</div>\n\tindent ünï 🎉\n' } }],
      warnings: [],
    },
    {
      title: 'two calls after content',
      text:
        'Let me do two things.\n<tool_call>\n<function=get_time>\n</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n' +
        '<parameter=city>\nNew York\n</parameter>\n<parameter=unit>\ncelsius\n</parameter>\n</function>\n</tool_call>',
      content: 'Let me do two things.\n',
      calls: [
        { name: 'get_time', arguments: {} },
        { name: 'get_weather', arguments: { city: 'New York', unit: 'celsius' } },
      ],
      warnings: [],
    },
    {
      title: 'unknown function: values best effort',
      text: '<tool_call>\n<function=launch>\n<parameter=target>\nmoon\n</parameter>\n<parameter=count>\n3\n</parameter>\n</function>\n</tool_call>',
      content: null,
      calls: [{ name: 'launch', arguments: { target: 'moon', count: 3 } }],
      warnings: [/unknown tool "launch"/],
    },
    {
      title: 'unknown parameter of a known tool is kept',
      text: '<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=extra>\n{"a": 1}\n</parameter>\n</function>\n</tool_call>',
      content: null,
      calls: [{ name: 'get_weather', arguments: { city: 'Paris', extra: { a: 1 } } }],
      warnings: [/unknown parameter "extra"/],
    },
    {
      title: 'a value that does not fit its type stays a string',
      text: '<tool_call>\n<function=get_weather>\n<parameter=city>\nTrue\n</parameter>\n<parameter=days>\nthree\n</parameter>\n</function>\n</tool_call>',
      content: null,
      calls: [{ name: 'get_weather', arguments: { city: 'True', days: 'three' } }],
      warnings: [/not a valid integer/],
    },
    {
      title: 'JSON inside <tool_call> is not this format: kept as content',
      text: '<tool_call>\n{"name": "get_time"}\n</tool_call> after',
      content: '<tool_call>\n{"name": "get_time"}\n</tool_call> after',
      calls: [],
      warnings: [/malformed/],
    },
    {
      title: '<function=...> without <tool_call>',
      text: 'Ok.\n<function=get_time>\n</function>',
      content: 'Ok.\n',
      calls: [{ name: 'get_time', arguments: {} }],
      warnings: [],
    },
    {
      title: 'missing </parameter> before the next parameter, no newlines',
      text: '<tool_call><function=get_weather><parameter=city>Paris<parameter=days>2</parameter></function></tool_call>',
      content: null,
      calls: [{ name: 'get_weather', arguments: { city: 'Paris', days: 2 } }],
      warnings: [/"city": missing <\/parameter>/],
    },
    {
      title: 'enum without a type, boolean that is not one',
      text: '<tool_call><function=search><parameter=mode>fast</parameter><parameter=exact>yes</parameter></function></tool_call>',
      content: null,
      calls: [{ name: 'search', arguments: { mode: 'fast', exact: 'yes' } }],
      warnings: [/not a valid boolean/],
    },
    {
      title: 'parameter names that are Object.prototype members',
      text: '<tool_call><function=get_weather><parameter=constructor>5</parameter><parameter=toString>x</parameter></function></tool_call>',
      content: null,
      calls: [{ name: 'get_weather', arguments: { constructor: 5, toString: 'x' } }],
      warnings: [/unknown parameter "constructor"/, /unknown parameter "toString"/],
    },
    {
      title: 'a broken <function= does not swallow the next call',
      text: 'See <function=x\n<tool_call><function=get_time></function></tool_call> ok <function=>',
      content: 'See <function=x\n ok <function=>',
      calls: [{ name: 'get_time', arguments: {} }],
      warnings: [/malformed/],
    },
    {
      title: 'missing </tool_call> at the end',
      text: '<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>\n',
      content: null,
      calls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }],
      warnings: [/missing <\/tool_call>/],
    },
  ],
};
