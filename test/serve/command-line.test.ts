/** `weft serve` flags: weft's names, OVMS's spellings, and usage errors before anything loads. */

import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { parseServeArgs, ServeUsageError } from '../../src/serve/command-line.js';
import { testIo } from '../cli/cli-harness.js';

describe('weft serve command line', () => {
  it('maps the flags to pipeline and server options', () => {
    const command = parseServeArgs([
      '-m', 'models/weft-demo', '--port', '9000', '--host', '0.0.0.0', '--kv-cache-size', '512MB', '--kv-cache-precision', 'u8',
      '--max-num-seqs', '16', '--max-num-batched-tokens', '4096', '--enable-prefix-caching', 'false', '--tool-parser', 'hermes',
      '--reasoning-parser', 'none', '--model-name', 'demo', '--api-key', 'k', '--threads', '2', '--shutdown-timeout', '2.5',
    ]);
    expect(command).toMatchObject({
      model: 'models/weft-demo',
      modelName: 'demo',
      host: '0.0.0.0',
      port: 9000,
      apiKey: 'k',
      parsers: { tool: 'hermes', reasoning: 'none' },
      shutdownTimeoutMs: 2500,
      pipeline: {
        threads: 2,
        kvCache: { size: '512MB', precision: 'u8' },
        scheduler: { maxNumSeqs: 16, maxNumBatchedTokens: 4096, prefixCaching: false },
      },
    });
  });

  it('takes an OVMS command line as it is', () => {
    const command = parseServeArgs([
      '--model_path', 'models/weft-demo', '--model_name', 'qwen', '--rest_port', '8001', '--rest_bind_address', '127.0.0.1',
      '--cache_size', '2', '--max_num_seqs', '8', '--max_num_batched_tokens', '1024', '--enable_prefix_caching', 'true',
      '--tool_parser', 'qwen3coder', '--reasoning_parser', 'qwen3', '--target_device', 'CPU',
    ]);
    expect(command).toMatchObject({
      model: 'models/weft-demo',
      modelName: 'qwen',
      port: 8001,
      parsers: { tool: 'qwen3coder', reasoning: 'qwen3' },
      // OVMS's --cache_size is in GB.
      pipeline: { device: 'CPU', kvCache: { size: '2GB' }, scheduler: { maxNumSeqs: 8, maxNumBatchedTokens: 1024, prefixCaching: true } },
    });
    expect(parseServeArgs(['-m', 'x', '--enable-prefix-caching']).pipeline.scheduler).toEqual({ prefixCaching: true });
    expect(parseServeArgs(['-m', 'x', '--enable-prefix-caching=false']).pipeline.scheduler).toEqual({ prefixCaching: false });
    // OVMS's tool-guided generation flag, off unless given.
    expect(parseServeArgs(['-m', 'x', '--enable_tool_guided_generation', 'true']).guidedTools).toBe(true);
    expect(parseServeArgs(['-m', 'x', '--enable-tool-guided-generation']).guidedTools).toBe(true);
    expect(parseServeArgs(['-m', 'x', '--enable-tool-guided-generation=false']).guidedTools).toBe(false);
    expect(parseServeArgs(['-m', 'x']).guidedTools).toBe(false);
  });

  it('refuses bad flags with a usage error', () => {
    expect(() => parseServeArgs([])).toThrow(ServeUsageError);
    expect(() => parseServeArgs(['-m', 'x', '--port', '70000'])).toThrow(/--port/);
    expect(() => parseServeArgs(['-m', 'x', '--max-num-seqs', '0'])).toThrow(/--max-num-seqs/);
    expect(() => parseServeArgs(['-m', 'x', '--tool-parser', 'nope'])).toThrow(/unknown parser/);
    expect(() => parseServeArgs(['-m', 'x', '--kv-cache-size', 'lots'])).toThrow(/--kv-cache-size/);
    expect(() => parseServeArgs(['-m', 'x', '--frobnicate'])).toThrow(ServeUsageError);
  });

  it('is a weft subcommand with its help', async () => {
    const io = testIo();
    expect(await runCli(['serve', '--help'], io)).toBe(0);
    expect(io.out()).toContain('Usage: weft serve --model <dir>');
    const help = testIo();
    expect(await runCli(['help', 'serve'], help)).toBe(0);
    expect(help.out()).toContain('--max-num-seqs');
    const general = testIo();
    await runCli(['--help'], general);
    expect(general.out()).toContain('weft serve');
    const bad = testIo();
    expect(await runCli(['serve', '--port', 'x', '-m', 'y'], bad)).toBe(2);
    expect(bad.err()).toContain('weft serve --help');
  });
});
