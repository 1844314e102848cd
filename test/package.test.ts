import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { demoModelPath, InvalidOptionError, WeftError } from '../src/index.js';

// The built bundles are checked as a user gets them, in test/package/tarball.test.ts.
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

describe('package surface', () => {
  it('exports typed errors with stable codes', () => {
    const error = new InvalidOptionError('kvCache.size', 'must be positive');
    expect(error).toBeInstanceOf(WeftError);
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toBe('kvCache.size: must be positive');
    expect(error.name).toBe('InvalidOptionError');
  });

  it("package.json's description names no backend that src/backends/ lacks", () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { description: string };
    const backends = readdirSync(join(root, 'src', 'backends'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    for (const [, name] of manifest.description.matchAll(/(\w+) backends?\b/gi)) {
      expect(backends, `"${name} backend" in the description`).toContain(name!.toLowerCase());
    }
  });

  it('demoModelPath() is the bundled demo model', () => {
    expect(demoModelPath()).toBe(join(root, 'models', 'weft-demo'));
    expect(existsSync(join(demoModelPath(), 'model.safetensors'))).toBe(true);
  });
});
