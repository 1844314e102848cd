import { describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../../src/errors.js';
import { createReasoningParser, reasoningParserNames, registerReasoningParser, toolParserFromStream, type ToolEvent, type ToolStream } from '../../src/parsers/index.js';
import { createToolParser, registerToolParser, toolParserNames } from '../../src/tool-formats/index.js';

describe('parser registry', () => {
  it('knows the built-in formats', () => {
    expect(toolParserNames()).toEqual(expect.arrayContaining(['qwen3coder', 'hermes', 'llama3_json', 'mistral', 'pythonic', 'deepseek_v3']));
    expect(reasoningParserNames()).toEqual(expect.arrayContaining(['qwen3', 'deepseek_r1']));
  });

  it('rejects unknown names with InvalidOptionError listing the known ones', () => {
    expect(() => createToolParser('nope')).toThrow(InvalidOptionError);
    expect(() => createToolParser('nope')).toThrow(/unknown tool parser "nope" \(known: .*hermes.*\)/);
    expect(() => createReasoningParser('nope')).toThrow(/unknown reasoning parser "nope" \(known: .*qwen3.*\)/);
    try {
      createToolParser('nope');
    } catch (error) {
      expect((error as InvalidOptionError).option).toBe('parsers.tool');
      expect((error as InvalidOptionError).code).toBe('INVALID_OPTION');
    }
  });

  it('rejects bad options', () => {
    expect(() => createToolParser('hermes', { tools: 'x' as never })).toThrow(InvalidOptionError);
    expect(() => createToolParser('hermes', { tools: [{ type: 'function' } as never] })).toThrow(/function.name/);
    expect(() => createReasoningParser('qwen3', { startsInReasoning: 'yes' as never })).toThrow(InvalidOptionError);
    expect(() => registerToolParser('', () => createToolParser('hermes'))).toThrow(InvalidOptionError);
  });

  it('registers a user parser built from a stream', () => {
    // A toy format: every line "CALL name" is a parameterless call, other text is content.
    class LineCallStream implements ToolStream {
      private buffer = '';
      private count = 0;
      readonly warnings: string[] = [];
      push(text: string): ToolEvent[] {
        this.buffer += text;
        const lines = this.buffer.split('\n');
        this.buffer = lines.pop()!;
        return lines.flatMap((line) => this.line(line + '\n'));
      }
      end(): ToolEvent[] {
        const rest = this.buffer;
        this.buffer = '';
        return rest ? this.line(rest) : [];
      }
      private line(line: string): ToolEvent[] {
        const match = /^CALL (\w+)\n?$/.exec(line);
        if (!match) return [{ type: 'content', text: line }];
        const index = this.count++;
        return [
          { type: 'tool-call-start', index, id: `call_${index}`, name: match[1]! },
          { type: 'tool-call-delta', index, argumentsDelta: '{}' },
          { type: 'tool-call-end', index, arguments: {} },
        ];
      }
    }
    registerToolParser('line_calls', () => toolParserFromStream('line_calls', () => new LineCallStream()));
    expect(toolParserNames()).toContain('line_calls');
    const result = createToolParser('line_calls').parse('hello\nCALL get_time\nbye');
    expect(result).toStrictEqual({ content: 'hello\nbye', toolCalls: [{ id: 'call_0', name: 'get_time', arguments: {} }], warnings: [] });
  });

  it('registers a user reasoning parser under a new name', () => {
    registerReasoningParser('qwen3_always_thinking', (options) => createReasoningParser('qwen3', { ...options, startsInReasoning: true }));
    expect(createReasoningParser('qwen3_always_thinking').parse('hmm</think>ok')).toMatchObject({ reasoning: 'hmm', content: 'ok' });
  });
});
