/**
 * Where weft's own files are: the package folder, the bundled demo model, the
 * native addon's sources. This file runs from src/ (vitest, tsx) and from the
 * bundles in dist/, so the package folder is found by walking up from here to
 * the package.json named "weft".
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ModelLoadError } from './errors.js';

/** Finds the weft package folder by walking up from `start`. */
export function findPackageRoot(start: string): string | undefined {
  for (let dir = start; ; ) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'weft') return dir;
      } catch {
        // An unreadable package.json is not ours; keep walking.
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

let root: string | null | undefined;

/** The folder of the weft package this code runs from (a clone or node_modules/weft), or undefined. */
export function packageRoot(): string | undefined {
  if (root === undefined) root = findPackageRoot(dirname(fileURLToPath(import.meta.url))) ?? null;
  return root ?? undefined;
}

/**
 * The absolute path of weft's bundled demo model (models/weft-demo: a small
 * chat model with tools, see docs/demo-model.md), for `Pipeline.create({ model })`
 * from an installed package as well as a clone.
 */
export function demoModelPath(): string {
  const dir = packageRoot();
  const model = dir === undefined ? undefined : join(dir, 'models', 'weft-demo');
  if (model === undefined || !existsSync(join(model, 'config.json'))) {
    throw new ModelLoadError(`weft's demo model is not in this installation (looked for ${model ?? 'models/weft-demo above ' + fileURLToPath(import.meta.url)})`, model);
  }
  return model;
}

/**
 * A fingerprint of the native addon's sources (native/src, native/common and native/CMakeLists.txt):
 * sha256 over each file's path and contents, in path order. A prebuilt binary
 * records the fingerprint it was built from, so a binary that no longer matches
 * the sources next to it is never loaded.
 */
export function nativeSourceHash(packageDir: string): string {
  const native = join(packageDir, 'native');
  const common = join(native, 'common');
  const files = [join(native, 'CMakeLists.txt'), ...listFiles(join(native, 'src')), ...(existsSync(common) ? listFiles(common) : [])].sort();
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(relative(native, file).split(sep).join('/'));
    hash.update('\0');
    hash.update(readFileSync(file));
    hash.update('\0');
  }
  return `sha256:${hash.digest('hex')}`;
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(join(dir, entry.name)) : entry.isFile() ? [join(dir, entry.name)] : [],
  );
}
