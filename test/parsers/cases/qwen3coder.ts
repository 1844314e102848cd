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
    {
      title: 'every schema type: string, integer, number, boolean, null, object, array',
      text:
        '<tool_call>\n<function=convert>\n<parameter=s>\n007\n</parameter>\n<parameter=i>\n-13\n</parameter>\n' +
        '<parameter=n>\n-1.5e3\n</parameter>\n<parameter=b>\nFALSE\n</parameter>\n<parameter=z>\nNone\n</parameter>\n' +
        '<parameter=o>\n{"inner": [{"x": 1}, {"y": [true, null]}]}\n</parameter>\n<parameter=a>\n[{"id": 1}, {"id": 2}]\n</parameter>\n' +
        '</function>\n</tool_call>',
      content: null,
      calls: [
        {
          name: 'convert',
          arguments: { s: '007', i: -13, n: -1500, b: false, z: null, o: { inner: [{ x: 1 }, { y: [true, null] }] }, a: [{ id: 1 }, { id: 2 }] },
        },
      ],
      warnings: [],
    },
    {
      title: 'nested values written as Python literals or encoded twice',
      text:
        "<tool_call>\n<function=convert>\n<parameter=o>\n{'inner': [{'k': None, 'ok': True}, (1, 2)]}\n</parameter>\n" +
        '<parameter=a>\n"[{\\"id\\": 7}]"\n</parameter>\n</function>\n</tool_call>',
      content: null,
      calls: [{ name: 'convert', arguments: { o: { inner: [{ k: null, ok: true }, [1, 2]] }, a: [{ id: 7 }] } }],
      warnings: [],
    },
    {
      title: 'anyOf, oneOf and type lists: the first declared type that fits wins, null when admitted',
      text:
        '<tool_call><function=convert><parameter=maybeInt>null</parameter><parameter=strOrInt>42</parameter>' +
        '<parameter=intOrStr>42</parameter><parameter=choice>green</parameter></function></tool_call>' +
        '<tool_call><function=convert><parameter=maybeInt>5</parameter><parameter=intOrStr>forty-two</parameter>' +
        '<parameter=choice>3</parameter></function></tool_call>',
      content: null,
      calls: [
        { name: 'convert', arguments: { maybeInt: null, strOrInt: '42', intOrStr: 42, choice: 'green' } },
        { name: 'convert', arguments: { maybeInt: 5, intOrStr: 'forty-two', choice: '3' } },
      ],
      warnings: [],
    },
    {
      title: 'enum with a type, type aliases (float, bool), an unknown type read best-effort',
      text:
        '<tool_call><function=convert><parameter=level>high</parameter><parameter=f>2.50</parameter><parameter=flag>True</parameter>' +
        '<parameter=custom>[1, "two"]</parameter></function></tool_call>' +
        '<tool_call><function=convert><parameter=custom>plain words</parameter></function></tool_call>',
      content: null,
      calls: [
        { name: 'convert', arguments: { level: 'high', f: 2.5, flag: true, custom: [1, 'two'] } },
        { name: 'convert', arguments: { custom: 'plain words' } },
      ],
      warnings: [],
    },
    {
      title: 'values that fit no declared type stay strings, with a warning each',
      text: '<tool_call><function=convert><parameter=i>4.5</parameter><parameter=o>[1]</parameter><parameter=maybeInt>many</parameter></function></tool_call>',
      content: null,
      calls: [{ name: 'convert', arguments: { i: '4.5', o: '[1]', maybeInt: 'many' } }],
      warnings: [/"4\.5" is not a valid integer/, /"\[1\]" is not a valid object/, /"many" is not a valid integer/],
    },
    {
      title: 'a parameter given twice keeps its first value',
      text: '<tool_call>\n<function=write_file>\n<parameter=path>\na.txt\n</parameter>\n<parameter=path>\nb.txt\n</parameter>\n<parameter=content>\nx\n</parameter>\n</function>\n</tool_call>',
      content: null,
      calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'x' } }],
      warnings: [/parameter "path" was given again/],
    },
    {
      title: 'a bare <function=...> closed by </tool_call>',
      text: 'Before.<function=get_weather><parameter=city>Lyon</parameter></function></tool_call> After.',
      content: 'Before. After.',
      calls: [{ name: 'get_weather', arguments: { city: 'Lyon' } }],
      warnings: [],
    },
  ],
};
