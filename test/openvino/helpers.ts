/** Shared by the OpenVINO tests: where the IR fixtures are, and whether the addon is built. */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe } from 'vitest';
import { openVinoAddonPath } from '../../src/backends/openvino/native-binding.js';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DEMO_HF = join(REPO_ROOT, 'models', 'weft-demo');
export const DEMO_IR = (weights: 'f32' | 'int8' | 'int4'): string => join(REPO_ROOT, 'models', 'weft-demo-openvino', weights);
export const TINY_HF = join(REPO_ROOT, 'test', 'fixtures', 'qwen3-tiny');
export const TINY_IR = (weights: 'f32' | 'int8' | 'int4'): string => join(REPO_ROOT, 'test', 'fixtures', 'qwen3-tiny-openvino', weights);

/** f32 compute and f32 cache: the settings under which OpenVINO must match the CPU backend. */
export const EXACT = { inferencePrecision: 'f32' as const, kvPrecision: 'f32' as const };

let warned = false;
/**
 * describe() when the OpenVINO addon is built, else a skip with one visible message.
 * WEFT_REQUIRE_OPENVINO=1 (CI) turns a missing addon into a failure.
 */
export function describeOpenVino(name: string, body: () => void): void {
  const built = existsSync(openVinoAddonPath());
  if (!built && process.env.WEFT_REQUIRE_OPENVINO === '1') {
    throw new Error(`WEFT_REQUIRE_OPENVINO=1 but ${openVinoAddonPath()} is not built (npm run build:openvino)`);
  }
  if (!built && !warned) {
    warned = true;
    console.warn('[weft tests] OpenVINO addon not built: skipping OpenVINO tests (pip install openvino==2026.4.1 && npm run build:openvino)');
  }
  (built ? describe : describe.skip)(name, body);
}
