/**
 * Items 3, 4 and 7 of issue 9: a model folder's chat template and tokenizer
 * are untrusted, and big inputs are refused before they are tokenized. Each
 * case runs in a child process (untrusted-text-case.ts), so that a case which
 * ends the process (V8's fatal "invalid size" / heap limit) or freezes its
 * event loop fails here instead of taking the test runner down. Each asserts
 * the typed error, that 10 ms timers kept firing (the loop never stalled for
 * long), and that the same pipeline served normal requests afterwards.
 */

import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const SCRIPT = new URL('./untrusted-text-case.ts', import.meta.url).pathname;

interface Outcome {
  code: string;
  elapsedMs: number;
  maxGapMs: number;
  recovered: boolean;
}

function runCase(name: string): Promise<{ outcome?: Outcome; exit: string }> {
  return new Promise((resolve) => {
    execFile('npx', ['tsx', SCRIPT, name], { timeout: 45_000, maxBuffer: 1 << 20 }, (error, stdout) => {
      const line = stdout.trim().split('\n').pop() ?? '';
      let outcome: Outcome | undefined;
      try {
        outcome = JSON.parse(line) as Outcome;
      } catch {
        outcome = undefined;
      }
      resolve({ outcome, exit: error ? `${error.message.split('\n')[0]} (signal ${error.signal ?? 'none'})` : 'ok' });
    });
  });
}

// A generous bound for a shared 2-core machine; a blocked loop stalls for the whole case (seconds, or forever).
const MAX_GAP_MS = 750;

describe('untrusted model folders cannot kill or freeze the process', () => {
  it.each([
    ['range-bomb', 'a template calling range(1000000000)', 'CHAT_TEMPLATE_ERROR'],
    ['endless-loop', 'a template that loops (practically) forever', 'CHAT_TEMPLATE_ERROR'],
    ['huge-output', 'a template rendering 6 GB of text', 'CHAT_TEMPLATE_ERROR'],
    ['backtracking-regex', 'a tokenizer.json Split regex (a|aa)+$ on a matching prompt', 'TOKENIZER_ERROR'],
  ])('%s: %s ends in %s within the deadline', async (name, _what, code) => {
    const { outcome, exit } = await runCase(name);
    expect(exit).toBe('ok');
    expect(outcome?.code).toBe(code);
    expect(outcome!.maxGapMs).toBeLessThan(MAX_GAP_MS);
    expect(outcome!.recovered).toBe(true);
  });

  it.each([
    ['megabyte-prompt', 'a 1 MB text prompt', 'PROMPT_TOO_LONG'],
    ['many-messages', '100,000 chat messages', 'INVALID_OPTION'],
  ])('%s: %s is refused before tokenizing, without blocking', async (name, _what, code) => {
    const { outcome, exit } = await runCase(name);
    expect(exit).toBe('ok');
    expect(outcome?.code).toBe(code);
    expect(outcome!.elapsedMs).toBeLessThan(500);
    expect(outcome!.recovered).toBe(true);
  });
});
