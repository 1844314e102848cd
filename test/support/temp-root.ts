/**
 * Vitest global setup: every temporary file the tests make (models written on
 * the fly, GGUF conversions, child processes' scratch) goes under one folder
 * per run, removed when the run ends. Tests call os.tmpdir() as usual; it
 * reads TMPDIR, which the forked test workers inherit from here. Without it a
 * full run left ~190 MB of model files in /tmp each time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'weft-tests-'));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = root;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(root, { recursive: true, force: true });
  };
}
