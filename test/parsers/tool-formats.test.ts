import { describe, expect, it } from 'vitest';
import { createToolParser } from '../../src/tool-formats/index.js';
import { toolCorpora } from './cases/index.js';
import { chars, checkEventContract, runStream, TOOLS } from './helpers.js';

for (const corpus of toolCorpora) {
  describe(`tool parser ${corpus.parser}`, () => {
    for (const c of corpus.cases) {
      it(c.title, () => {
        const parser = createToolParser(corpus.parser, { tools: TOOLS });
        const result = parser.parse(c.text);
        expect(result.content).toBe(c.content);
        expect(result.toolCalls.map(({ name, arguments: args }) => ({ name, arguments: args }))).toStrictEqual(c.calls);
        expect(result.toolCalls.map((call) => call.id)).toStrictEqual(c.calls.map((_, k) => `call_${k}`));
        if (c.warnings.length === 0) expect(result.warnings).toStrictEqual([]);
        for (const pattern of c.warnings) expect(result.warnings.some((w) => pattern.test(w)), `${pattern} in ${JSON.stringify(result.warnings)}`).toBe(true);

        // One character at a time gives the same result, and the events keep their contract.
        const events = runStream(parser.stream(), chars(c.text));
        const calls = checkEventContract(events);
        expect(calls).toStrictEqual(result.toolCalls);
        const content = events.flatMap((e) => (e.type === 'content' ? [e.text] : [])).join('');
        expect(content || null).toBe(result.content);
      });
    }
  });
}

describe('tool parser streaming behaviour', () => {
  it('streams qwen3coder string values as they arrive and holds back partial tags', () => {
    const stream = createToolParser('qwen3coder', { tools: TOOLS }).stream();
    expect(stream.push('Sure.\n<tool_')).toStrictEqual([{ type: 'content', text: 'Sure.\n' }]);
    expect(stream.push('call>\n<function=write_file>\n')).toStrictEqual([
      { type: 'tool-call-start', index: 0, id: 'call_0', name: 'write_file' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{' },
    ]);
    expect(stream.push('<parameter=content>\nline "1"\n')).toStrictEqual([{ type: 'tool-call-delta', index: 0, argumentsDelta: '"content":"line \\"1\\"' }]);
    // The newline is held: it is dropped if the value ends here, kept if more text follows.
    expect(stream.push('line 2</para')).toStrictEqual([{ type: 'tool-call-delta', index: 0, argumentsDelta: '\\nline 2' }]);
    expect(stream.push('meter>\n</function>\n</tool_call>')).toStrictEqual([
      { type: 'tool-call-delta', index: 0, argumentsDelta: '"}' },
      { type: 'tool-call-end', index: 0, arguments: { content: 'line "1"\nline 2' } },
    ]);
    expect(stream.end()).toStrictEqual([]);
  });

  it('streams qwen3coder calls the way OVMS does: each name when its tag closes, tags split anywhere', () => {
    // [chunk, name of the call that must start in this chunk (or null)]
    const code = 'if x == "{}":\n    print(f\'\\n\\t{x} "q" \\\\ </param\')\n';
    const chunks: [string, string | null][] = [
      ['Intro text ', null],
      ['<function=get_weather><parameter=city>', 'get_weather'],
      ['Nice</parameter></function></tool_call>', null],
      [' <too', null], ['l_cal', null], ['l>\n', null], ['<fun', null], ['ctio', null], ['n=ge', null], ['t_weather', null],
      ['>', 'get_weather'],
      ['\n', null], ['<paramete', null], ['r=ci', null], ['ty', null], ['>', null], ['\n', null], ['PAR', null], ['IS', null],
      ['</pa', null], ['rameter>\n', null], ['</function>', null], ['</tool_call>', null],
      [' between ', null],
      ['<tool_call>\n', null], ['<function=get_weather', null],
      ['>\n', 'get_weather'],
      ['<parameter=city>\n', null], ['\n', null], ['Old Town\n', null], ['</parameter>\n', null],
      ['<parameter=days>', null], ['\n', null], ['31', null], ['4\n', null], ['</parameter>\n', null], ['</function>', null], ['</tool_call>', null],
      ['<tool_call><function=write_file><parameter=content>', 'write_file'],
      [`\n${code}</parameter></function></tool_call>`, null],
    ];
    const stream = createToolParser('qwen3coder', { tools: TOOLS }).stream();
    const events = [];
    for (const [chunk, startsCall] of chunks) {
      const out = stream.push(chunk);
      const started = out.flatMap((e) => (e.type === 'tool-call-start' ? [e.name] : []));
      expect(started, JSON.stringify(chunk)).toStrictEqual(startsCall === null ? [] : [startsCall]);
      events.push(...out);
    }
    events.push(...stream.end());
    expect(checkEventContract(events).map(({ name, arguments: args }) => ({ name, arguments: args }))).toStrictEqual([
      { name: 'get_weather', arguments: { city: 'Nice' } },
      { name: 'get_weather', arguments: { city: 'PARIS' } },
      // One leading and one trailing newline belong to the tags; the rest is the value.
      { name: 'get_weather', arguments: { city: '\nOld Town', days: 314 } },
      { name: 'write_file', arguments: { content: code.slice(0, -1) } },
    ]);
    // OVMS drops text after the first call; weft keeps every character outside the calls.
    expect(events.flatMap((e) => (e.type === 'content' ? [e.text] : [])).join('')).toBe('Intro text  between ');
    expect(stream.warnings).toStrictEqual([]);
  });

  it('streams hermes arguments before the object is complete', () => {
    const stream = createToolParser('hermes').stream();
    expect(stream.push('<tool_call>{"name": "search", "arguments": {"query": "long te')).toStrictEqual([
      { type: 'tool-call-start', index: 0, id: 'call_0', name: 'search' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"query":"long te' },
    ]);
    // Numbers are sent once terminated, so every prefix sent is a prefix of valid JSON.
    expect(stream.push('xt", "limit": 1')).toStrictEqual([{ type: 'tool-call-delta', index: 0, argumentsDelta: 'xt","limit":' }]);
    expect(stream.push('0}}</tool_call>')).toStrictEqual([
      { type: 'tool-call-delta', index: 0, argumentsDelta: '10}' },
      { type: 'tool-call-end', index: 0, arguments: { query: 'long text', limit: 10 } },
    ]);
  });

  it('uses an injected id generator', () => {
    const parser = createToolParser('hermes', { generateId: (index) => `req7-${index}` });
    const result = parser.parse('<tool_call>{"name":"a"}</tool_call><tool_call>{"name":"b"}</tool_call>');
    expect(result.toolCalls.map((c) => c.id)).toStrictEqual(['req7-0', 'req7-1']);
  });

  it('ignores push() after end() with a warning instead of throwing', () => {
    const stream = createToolParser('hermes').stream();
    expect(stream.push('hi <tool')).toStrictEqual([{ type: 'content', text: 'hi ' }]);
    expect(stream.end()).toStrictEqual([{ type: 'content', text: '<tool' }]); // held back, never lost
    expect(stream.push('more')).toStrictEqual([]);
    expect(stream.end()).toStrictEqual([]);
    expect(stream.warnings).toContain('push() after end() was ignored');
  });

  it('accepts token ids with a delta', () => {
    const stream = createToolParser('mistral').stream();
    const events = [...stream.push('[TOOL_CALLS]', [5]), ...stream.push('get_time[ARGS]{}', [1, 2, 3]), ...stream.end()];
    expect(checkEventContract(events)).toStrictEqual([{ id: 'call_0', name: 'get_time', arguments: {} }]);
  });
});
