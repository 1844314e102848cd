/**
 * The committed IR fixtures are exactly what tools/openvino/make_ir.py makes from
 * the committed safetensors (OpenVINO's Python opset API, no PyTorch).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_HF, DEMO_IR, REPO_ROOT, TINY_HF, TINY_IR } from './helpers.js';

const python = process.env.WEFT_PYTHON ?? 'python3';
const probe = spawnSync(python, ['-c', 'import openvino, numpy'], { encoding: 'utf8' });
const available = probe.status === 0;
if (!available && process.env.WEFT_REQUIRE_OPENVINO === '1') throw new Error(`WEFT_REQUIRE_OPENVINO=1 but ${python} cannot import openvino: ${probe.stderr}`);
if (!available) console.warn('[weft tests] python3 with openvino not found: skipping the IR recipe check (pip install openvino==2026.4.1)');

const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

(available ? describe : describe.skip)('IR recipe reproduces the committed fixtures', () => {
  const out = mkdtempSync(join(tmpdir(), 'weft-ir-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it.each([
    ['qwen3-tiny', TINY_HF, TINY_IR],
    ['weft-demo', DEMO_HF, DEMO_IR],
  ] as const)('%s at f32, int8 and int4', (name, hf, ir) => {
    for (const weights of ['f32', 'int8', 'int4'] as const) {
      const dir = join(out, `${name}-${weights}`);
      const run = spawnSync(python, [join(REPO_ROOT, 'tools', 'openvino', 'make_ir.py'), '--model', hf, '--out', dir, '--weights', weights], { encoding: 'utf8' });
      expect(run.status, run.stderr).toBe(0);
      for (const file of ['openvino_model.xml', 'openvino_model.bin']) expect(sha(join(dir, file)), `${name} ${weights} ${file}`).toBe(sha(join(ir(weights), file)));
    }
  }, 120_000);
});
