/**
 * Where one of weft's own entry scripts (the text sandbox's worker process,
 * the isolated pipeline's child) is, and how to start it, from the bundles
 * and from the TypeScript sources alike.
 *
 * From dist/, `caller` is a bundle file and the script is `dist/<bundleName>.js`
 * beside it (tsup builds it as its own entry; ESM, as the package is "type":
 * "module", so dist/index.cjs starts the same file). From src/ (vitest, tsx),
 * `caller` ends in `.ts` and the script is the TypeScript file itself, started
 * through tsx's loader (`--import`) (a devDependency, present wherever the sources run).
 */

import type { ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface EntryScript {
  /** Absolute path of the script. */
  readonly file: string;
  /** True when it is a TypeScript source that needs tsx's loader. */
  readonly typescript: boolean;
}

/** `caller` is the calling module's `import.meta.url`; `srcFile` is relative to it; `bundleName` names the tsup entry. */
export function entryScript(caller: string, srcFile: string, bundleName: string): EntryScript {
  if (caller.endsWith('.ts')) return { file: fileURLToPath(new URL(srcFile, caller)), typescript: true };
  return { file: fileURLToPath(new URL(`./${bundleName}.js`, caller)), typescript: false };
}

/** Node flags for a child process running `script` (`child_process.fork`). */
export function childExecArgv(script: EntryScript): string[] {
  return script.typescript ? ['--import', tsxModule('dist/loader.mjs')] : [];
}

function tsxModule(path: string): string {
  const packageJson = createRequire(import.meta.url).resolve('tsx/package.json');
  return pathToFileURL(packageJson.replace(/package\.json$/, path)).href;
}

/** Whether a child (its process and IPC channel) keeps this process's event loop alive: only while work is pending. */
export function setChildRef(child: ChildProcess, ref: boolean): void {
  const channel = child.channel as { ref(): void; unref(): void } | undefined | null;
  if (ref) {
    child.ref();
    channel?.ref();
  } else {
    child.unref();
    channel?.unref();
  }
}
