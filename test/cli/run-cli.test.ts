import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { ChatTemplateError, InvalidOptionError, TokenizerError } from '../../src/errors.js';
import type { StreamPart } from '../../src/cli/pipeline-port.js';
import { FakePipeline, opener, testIo, textReply } from './cli-harness.js';

/** Resolves once `condition` holds (polling), so interrupts land mid-stream without guessing timings. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 2));
}

const usage = (completionTokens: number) => ({ promptTokens: 2, completionTokens, cachedPromptTokens: 0 });

describe('weft --help / --version / bad input', () => {
  it('prints help and the package version', async () => {
    const io = testIo();
    expect(await runCli(['--help'], io)).toBe(0);
    expect(io.out()).toContain('weft generate --model <dir>');
    const io2 = testIo();
    expect(await runCli(['--version'], io2)).toBe(0);
    expect(io2.out()).toMatch(/^\d+\.\d+\.\d+\n$/);
    const io3 = testIo();
    expect(await runCli(['chat', '--help'], io3)).toBe(0);
    expect(io3.out()).toContain('/reset');
  });

  it('exits 2 with a message and a hint on a bad flag, without opening a model', async () => {
    const { open, opened } = opener(new FakePipeline(() => []));
    const io = testIo();
    expect(await runCli(['generate', '--model', 'm', '--max-tokens', 'lots', 'hi'], io, { openPipeline: open })).toBe(2);
    expect(io.err()).toContain('--max-tokens must be an integer >= 1, got "lots"');
    expect(io.err()).toContain('weft generate --help');
    expect(io.out()).toBe('');
    expect(opened).toHaveLength(0);
  });

  it('exits 1 with the typed error when the model does not load', async () => {
    const io = testIo();
    const open = async () => {
      throw new TokenizerError('/m/tokenizer.json is missing');
    };
    expect(await runCli(['generate', '-m', '/m', 'hi'], io, { openPipeline: open })).toBe(1);
    expect(io.err()).toContain('/m/tokenizer.json is missing (TOKENIZER_ERROR)');
  });

  it('exits 2 when the pipeline rejects an option value', async () => {
    const io = testIo();
    const open = async () => {
      throw new InvalidOptionError('kvCache.size', 'too small');
    };
    expect(await runCli(['generate', '-m', 'm', '--kv-cache', '1B', 'hi'], io, { openPipeline: open })).toBe(2);
    expect(io.err()).toContain('kvCache.size: too small');
  });
});

describe('weft generate', () => {
  it('streams the text to stdout, progress and tokens/s to stderr, passes options, and closes', async () => {
    const pipeline = new FakePipeline(() => textReply('there was a cat.', 'length'));
    const { open, opened } = opener(pipeline);
    const io = testIo();
    const code = await runCli(
      ['generate', '-m', '/models/x', '-n', '4', '-t', '0', '--seed', '3', '--threads', '2', '--kv-cache', '32MB', 'Once', 'upon'],
      io,
      { openPipeline: open },
    );
    expect(code).toBe(0);
    expect(io.out()).toBe('there was a cat.\n');
    expect(pipeline.calls).toHaveLength(1);
    expect(pipeline.calls[0]?.input).toBe('Once upon');
    expect(pipeline.calls[0]?.options).toMatchObject({ maxTokens: 4, temperature: 0, seed: 3 });
    expect(pipeline.calls[0]?.options.signal).toBeInstanceOf(AbortSignal);
    expect(opened[0]).toMatchObject({ model: '/models/x', threads: 2, kvCache: { size: '32MB' } });
    expect(io.err()).toContain('weft: loading weights (1.0 KB)');
    expect(io.err()).not.toContain('loading done');
    expect(io.err()).toMatch(/loaded \/models\/x in \d+\.\d\d s/);
    expect(io.err()).toMatch(/4 tokens in \d+\.\d\d s, [\d.]+ tokens\/s, first token \d+ ms, finish: length/);
    expect(pipeline.closed).toBe(true);
    expect(io.interruptListeners()).toBe(0);
  });

  it('--quiet prints nothing on stderr; --echo prints the prompt first', async () => {
    const pipeline = new FakePipeline(() => textReply(' and on.'));
    const io = testIo();
    expect(await runCli(['generate', '-q', '--echo', '-m', 'x', 'on'], io, { openPipeline: opener(pipeline).open })).toBe(0);
    expect(io.out()).toBe('on and on.\n');
    expect(io.err()).toBe('');
  });

  it('draws a redrawn bar on a terminal and clears it', async () => {
    const pipeline = new FakePipeline(() => textReply('x'));
    const io = testIo({ tty: true });
    await runCli(['generate', '-m', 'x', 'p'], io, { openPipeline: opener(pipeline).open });
    expect(io.err()).toContain('\r\x1b[2Kloading weights [');
    expect(io.err()).toContain(' 50% 512 B / 1.0 KB');
    expect(io.err()).toContain('100% 1.0 KB / 1.0 KB');
    expect(io.err()).toMatch(/\r\x1b\[2Kweft: loaded x in/);
  });

  it('reads the prompt from stdin when none is given, without its final newline', async () => {
    const pipeline = new FakePipeline(() => textReply('ok'));
    const io = testIo({ stdin: 'from a pipe\n' });
    expect(await runCli(['generate', '-m', 'x'], io, { openPipeline: opener(pipeline).open })).toBe(0);
    expect(pipeline.calls[0]?.input).toBe('from a pipe');
  });

  it('refuses to wait for a prompt typed on a terminal', async () => {
    const io = testIo({ stdinIsTTY: true });
    const { open, opened } = opener(new FakePipeline(() => []));
    expect(await runCli(['generate', '-m', 'x'], io, { openPipeline: open })).toBe(2);
    expect(io.err()).toContain('no prompt given');
    expect(opened).toHaveLength(0);
  });

  it('Ctrl-C stops generation: partial text kept, exit 130, pipeline closed', async () => {
    const pipeline = new FakePipeline(() => textReply('one two three four five six seven eight'));
    pipeline.delayMs = 20;
    const io = testIo();
    const run = runCli(['generate', '-m', 'x', 'count'], io, { openPipeline: opener(pipeline).open });
    await until(() => io.out().includes('two'));
    io.interrupt();
    expect(await run).toBe(130);
    expect(io.out().length).toBeGreaterThan(0);
    expect(io.out()).not.toContain('eight');
    expect(io.out().endsWith('\n')).toBe(true);
    expect(io.err()).toContain('interrupted');
    expect(pipeline.calls[0]?.options.signal?.aborted).toBe(true);
    expect(pipeline.closed).toBe(true);
  });

  it('shows reasoning inside <think> tags and tool calls on a pipe', async () => {
    const parts: StreamPart[] = [
      { type: 'reasoning-delta', text: 'need ' },
      { type: 'reasoning-delta', text: 'a tool' },
      { type: 'tool-call-start', index: 0, id: 'c1', name: 'add' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"a":1' },
      { type: 'tool-call', index: 0, id: 'c1', name: 'add', arguments: { a: 1, b: 2 } },
      { type: 'finish', finishReason: 'tool_calls', usage: usage(9) },
    ];
    const io = testIo();
    await runCli(['generate', '-m', 'x', 'q'], io, { openPipeline: opener(new FakePipeline(() => parts)).open });
    expect(io.out()).toBe('<think>need a tool</think>\n→ add({"a":1,"b":2})\n');
  });

  it('dims reasoning on a color terminal, and not with NO_COLOR', async () => {
    const parts: StreamPart[] = [
      { type: 'reasoning-delta', text: 'hmm' },
      { type: 'text-delta', text: 'Yes.' },
      { type: 'finish', finishReason: 'stop', usage: usage(2) },
    ];
    const color = testIo({ tty: true });
    await runCli(['generate', '-m', 'x', 'q'], color, { openPipeline: opener(new FakePipeline(() => parts)).open });
    expect(color.out()).toBe('\x1b[2mhmm\x1b[22m\nYes.\n');
    const plain = testIo({ tty: true, env: { NO_COLOR: '1' } });
    await runCli(['generate', '-m', 'x', 'q'], plain, { openPipeline: opener(new FakePipeline(() => parts)).open });
    expect(plain.out()).toBe('<think>hmm</think>\nYes.\n');
  });

  it('a request that fails mid-stream exits 1 with its typed error', async () => {
    const pipeline = new FakePipeline(() => []);
    pipeline.stream = () => ({
      async *[Symbol.asyncIterator]() {
        yield { type: 'text-delta', text: 'partial' } as StreamPart;
        throw new InvalidOptionError('temperature', 'must be >= 0');
      },
    });
    const io = testIo();
    expect(await runCli(['generate', '-m', 'x', 'q'], io, { openPipeline: opener(pipeline).open })).toBe(2);
    expect(io.err()).toContain('temperature: must be >= 0 (INVALID_OPTION)');
    expect(pipeline.closed).toBe(true);
  });
});

describe('weft chat', () => {
  it('keeps the conversation across turns, with the system message, /reset and /exit', async () => {
    const pipeline = new FakePipeline((call, index) => {
      if (index === 1) {
        return [
          { type: 'reasoning-delta', text: 'recall' },
          { type: 'text-delta', text: 'Your name is Ada.' },
          { type: 'finish', finishReason: 'stop', usage: usage(5) },
        ];
      }
      return textReply(`reply ${index}`);
    });
    const io = testIo({ stdin: 'My name is Ada.\nWhat is my name?\n\n/reset\nAnd now?\n/exit\nnever read\n' });
    const code = await runCli(['chat', '-m', 'x', '--system', 'Be brief.', '-n', '16', '--template-kwargs', '{"enable_thinking":false}'], io, {
      openPipeline: opener(pipeline).open,
    });
    expect(code).toBe(0);
    expect(pipeline.calls.map((call) => call.input)).toEqual([
      [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'My name is Ada.' },
      ],
      [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'My name is Ada.' },
        { role: 'assistant', content: 'reply 0' },
        { role: 'user', content: 'What is my name?' },
      ],
      [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'And now?' },
      ],
    ]);
    expect(pipeline.calls[0]?.options.maxTokens).toBe(16);
    expect(pipeline.calls[2]?.options.templateKwargs).toEqual({ enable_thinking: false });
    expect(io.out()).toBe('reply 0\n<think>recall</think>\nYour name is Ada.\nreply 2\n');
    expect(io.err()).toContain('conversation reset');
    expect(pipeline.closed).toBe(true);
  });

  it('keeps reasoning and tool calls of earlier turns in the conversation', async () => {
    const pipeline = new FakePipeline((call, index) =>
      index === 0
        ? [
            { type: 'reasoning-delta', text: 'think' },
            { type: 'tool-call', index: 0, id: 'c1', name: 'now', arguments: {} },
            { type: 'finish', finishReason: 'tool_calls', usage: usage(4) },
          ]
        : textReply('ok'),
    );
    const io = testIo({ stdin: 'time?\nthanks\n' });
    expect(await runCli(['chat', '-m', 'x', '-q'], io, { openPipeline: opener(pipeline).open })).toBe(0);
    expect((pipeline.calls[1]?.input as unknown[])[1]).toEqual({
      role: 'assistant',
      content: '',
      reasoning: 'think',
      toolCalls: [{ id: 'c1', name: 'now', arguments: {} }],
    });
  });

  it('a model without a chat template ends the chat with exit 1 and the reason', async () => {
    const pipeline = new FakePipeline(() => []);
    pipeline.stream = () => {
      throw new ChatTemplateError('the model in x has no chat template');
    };
    const io = testIo({ stdin: 'hello\nagain\n' });
    expect(await runCli(['chat', '-m', 'x'], io, { openPipeline: opener(pipeline).open })).toBe(1);
    expect(io.err()).toContain('has no chat template (CHAT_TEMPLATE_ERROR)');
    expect(pipeline.closed).toBe(true);
  });

  it('Ctrl-C stops the answer being written, keeps the partial answer, and the chat goes on', async () => {
    const pipeline = new FakePipeline((call, index) => textReply(index === 0 ? 'a b c d e f g h i j' : 'second'));
    pipeline.delayMs = 15;
    const stdinLines = 'first\nsecond question\n';
    const io = testIo({ stdin: stdinLines });
    const run = runCli(['chat', '-m', 'x', '-q'], io, { openPipeline: opener(pipeline).open });
    await until(() => io.out().includes('b'));
    io.interrupt();
    expect(await run).toBe(0);
    expect(io.err()).toContain('answer stopped');
    expect(pipeline.calls).toHaveLength(2);
    const kept = (pipeline.calls[1]?.input as { role: string; content: string }[])[1];
    expect(kept?.role).toBe('assistant');
    expect(kept?.content.length).toBeGreaterThan(0);
    expect('a b c d e f g h i j'.startsWith(kept?.content ?? 'x')).toBe(true);
    expect(kept?.content).not.toBe('a b c d e f g h i j');
    expect(io.out().endsWith('second\n')).toBe(true);
  });
});

describe('weft demo', () => {
  // The full demo run on models/weft-demo is tested in test/demo-model.test.ts.
  it('names the missing demo model folder and exits 1', async () => {
    const io = testIo();
    expect(await runCli(['demo', '--model', '/nonexistent/weft-demo'], io)).toBe(1);
    expect(io.err()).toContain('no demo model at /nonexistent/weft-demo');
  });

  it('rejects arguments it does not take with exit code 2', async () => {
    const io = testIo();
    expect(await runCli(['demo', 'extra'], io)).toBe(2);
  });
});
