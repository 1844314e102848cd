import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/cli/args.js';
import { UsageError } from '../../src/cli/usage-error.js';

describe('parseCommandLine', () => {
  it('parses generate with every flag, joining the words of an unquoted prompt', () => {
    expect(
      parseCommandLine([
        'generate', '--model', 'm', '-n', '12', '--temperature', '0.7', '--top-p', '0.9', '--top-k', '40',
        '--seed', '7', '--threads', '2', '--kv-cache', '64MB', '--echo', '-q', 'Once', 'upon', 'a', 'time',
      ]),
    ).toEqual({
      name: 'generate', model: 'm', maxTokens: 12, temperature: 0.7, topP: 0.9, topK: 40, seed: 7, threads: 2,
      kvCache: '64MB', echo: true, quiet: true, prompt: 'Once upon a time',
    });
  });

  it('leaves unset flags out, and reads no prompt as "use stdin"', () => {
    expect(parseCommandLine(['generate', '-m', 'dir'])).toEqual({ name: 'generate', model: 'dir', echo: false, quiet: false, prompt: undefined });
  });

  it('parses chat and demo', () => {
    expect(parseCommandLine(['chat', '--model=m', '--system', 'Be brief.', '-t', '0'])).toEqual({
      name: 'chat', model: 'm', system: 'Be brief.', temperature: 0, quiet: false,
    });
    expect(parseCommandLine(['chat', '-m', 'm', '--template-kwargs', '{"enable_thinking":false}'])).toMatchObject({
      templateKwargs: { enable_thinking: false },
    });
    expect(parseCommandLine(['demo'])).toEqual({ name: 'demo', quiet: false });
    expect(parseCommandLine(['demo', '--threads', '1', '--model', 'x'])).toEqual({ name: 'demo', quiet: false, threads: 1, model: 'x' });
  });

  it('parses help and version forms', () => {
    expect(parseCommandLine(['--help'])).toEqual({ name: 'help' });
    expect(parseCommandLine(['-h'])).toEqual({ name: 'help' });
    expect(parseCommandLine(['help', 'chat'])).toEqual({ name: 'help', topic: 'chat' });
    expect(parseCommandLine(['generate', '--help'])).toEqual({ name: 'help', topic: 'generate' });
    expect(parseCommandLine(['--version'])).toEqual({ name: 'version' });
  });

  it.each([
    [[], /no command/],
    [['frobnicate'], /unknown command "frobnicate"/],
    [['--model', 'x'], /options go after the command/],
    [['generate', 'hi'], /--model <dir> is required/],
    [['generate', '-m', 'x', '--bogus', 'hi'], /Unknown option '--bogus'/],
    [['generate', '-m', 'x', '--max-tokens'], /argument missing/],
    [['generate', '-m', 'x', '--max-tokens', '0'], /--max-tokens must be an integer >= 1, got "0"/],
    [['generate', '-m', 'x', '--max-tokens', '2.5'], /--max-tokens must be an integer/],
    [['generate', '-m', 'x', '--temperature=-1'], /--temperature must be a number >= 0/],
    [['generate', '-m', 'x', '--temperature', 'hot'], /--temperature/],
    [['generate', '-m', 'x', '--top-p', '0'], /--top-p must be a number in \(0, 1\]/],
    [['generate', '-m', 'x', '--threads', ''], /--threads/],
    [['generate', '-m', 'x', '--kv-cache', 'lots'], /--kv-cache must be a size/],
    [['chat', '-m', 'x', 'hello'], /chat takes no prompt argument/],
    [['chat', '-m', 'x', '--template-kwargs', '[1]'], /--template-kwargs must be a JSON object/],
    [['chat', '-m', 'x', '--template-kwargs', '{oops'], /--template-kwargs must be a JSON object/],
    [['demo', 'now'], /demo takes no arguments/],
    [['help', 'nope'], /unknown command "nope"/],
  ])('rejects %j', (argv, message) => {
    expect(() => parseCommandLine(argv)).toThrow(UsageError);
    expect(() => parseCommandLine(argv)).toThrow(message);
  });
});

describe('--device', () => {
  it('passes the device to the pipeline options for generate and chat; an empty one is a usage error', () => {
    for (const name of ['generate', 'chat'] as const) {
      const command = parseCommandLine([name, '-m', 'ir-folder', '--device', 'openvino:CPU']);
      expect(command).toMatchObject({ name, model: 'ir-folder', device: 'openvino:CPU' });
    }
    expect(parseCommandLine(['generate', '-m', 'x'])).not.toHaveProperty('device');
    expect(() => parseCommandLine(['generate', '-m', 'x', '--device', ''])).toThrow(UsageError);
  });
});
