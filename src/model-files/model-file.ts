/**
 * The one way weft opens a file of a model folder. A model folder may come
 * from anyone, so every file in it is checked before a byte is read:
 *
 * - it is a regular file: a FIFO, socket or device (/dev/zero, /dev/stdin)
 *   would block a libuv pool thread forever or read without end;
 * - it stays inside the folder: a symlink may point elsewhere in the folder
 *   (Hugging Face caches link blobs that way), never outside it, so a model
 *   cannot make weft read (or quote) /etc/passwd;
 * - it is no larger than its kind can reasonably be (`maxBytes`);
 * - errors name the file and what is wrong with it, never its contents
 *   (Node's JSON.parse messages quote the text they failed on).
 *
 * The checks run on the path and again on the opened descriptor (fstat), so a
 * file swapped for a FIFO in between is still refused; the folder's own
 * location is resolved once, through its symlinks.
 */

import { constants } from 'node:fs';
import { lstat, open, realpath, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ModelLoadError } from '../errors.js';

/** Size limits by kind of file (bytes). */
export const MAX_FILE_BYTES = {
  /** config.json, generation_config.json, tokenizer_config.json, index files, templates. */
  smallJson: 64 * 2 ** 20,
  /** tokenizer.json: large vocabularies with merges run to tens of MB. */
  tokenizer: 512 * 2 ** 20,
} as const;

/** Opens `name` in `folder` for reading after the checks above; undefined when it does not exist. */
export async function openModelFile(folder: string, name: string): Promise<FileHandle | undefined> {
  const file = join(folder, name);
  const target = await insideFolder(folder, file);
  if (target === undefined) return undefined;
  let handle: FileHandle;
  try {
    // O_NONBLOCK: should the path have become a FIFO since the check, open must not wait for a writer.
    handle = await open(target, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new ModelLoadError(`cannot open ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`, file, undefined, { cause: error });
  }
  const info = await handle.stat();
  if (!info.isFile()) {
    await handle.close();
    throw notRegular(file);
  }
  return handle;
}

/** The whole file as bytes (undefined when absent), refused above `maxBytes`. */
export async function readModelFile(folder: string, name: string, maxBytes: number): Promise<Buffer | undefined> {
  const handle = await openModelFile(folder, name);
  if (handle === undefined) return undefined;
  const file = join(folder, name);
  try {
    const { size } = await handle.stat();
    if (size > maxBytes) throw new ModelLoadError(`${file} is ${size} bytes, more than the ${maxBytes} a file of its kind may have`, file);
    const bytes = Buffer.alloc(size);
    let done = 0;
    while (done < size) {
      const { bytesRead } = await handle.read(bytes, done, size - done, done);
      if (bytesRead === 0) break;
      done += bytesRead;
    }
    if (done !== size) throw new ModelLoadError(`${file} changed while it was read (${done} of ${size} bytes)`, file);
    return bytes;
  } finally {
    await handle.close();
  }
}

/** Parses JSON, reporting a failure by position only: the text itself is never quoted. */
export function parseJsonText(text: string, file: string, make: (message: string, cause: unknown) => Error = defaultError(file)): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const position = /position (\d+)/.exec(String((error as Error).message))?.[1];
    throw make(`${file} is not valid JSON${position !== undefined ? ` (at byte ${position})` : ''}`, error);
  }
}

function defaultError(file: string): (message: string, cause: unknown) => Error {
  return (message, cause) => new ModelLoadError(message, file, undefined, { cause });
}

/** The real path of `file` if it exists and lies inside `folder`'s real path; undefined if absent. */
async function insideFolder(folder: string, file: string): Promise<string | undefined> {
  const linkInfo = await lstat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
    throw new ModelLoadError(`cannot read ${file}: ${error.code ?? 'error'}`, file, undefined, { cause: error });
  });
  if (linkInfo === undefined) return undefined;
  if (!linkInfo.isSymbolicLink()) {
    if (!linkInfo.isFile()) throw notRegular(file);
    return file;
  }
  const [root, target] = await Promise.all([realpath(resolve(folder)), realpath(file).catch(() => undefined)]);
  if (target === undefined) throw new ModelLoadError(`${file} is a symbolic link to nothing`, file);
  const inside = relative(root, target);
  if (inside === '' || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
    throw new ModelLoadError(`${file} is a symbolic link out of the model folder; weft reads only files inside it`, file);
  }
  return target;
}

function notRegular(file: string): ModelLoadError {
  return new ModelLoadError(`${file} is not a regular file (a FIFO, socket, device or folder); weft reads only regular files of a model folder`, file);
}
