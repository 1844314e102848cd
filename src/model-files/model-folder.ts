import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ModelLoadError } from '../errors.js';

/**
 * Checks that `dir` is a Hugging Face model folder (it exists, is a folder and
 * holds config.json) before any file in it is read, so a wrong path is reported
 * as such and not as the first file that happened to be missing.
 */
export async function checkModelFolder(dir: string): Promise<void> {
  const where = resolve(dir);
  const info = await stat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') throw new ModelLoadError(`the model folder ${where} does not exist`, dir);
    throw new ModelLoadError(`the model folder ${where} cannot be read: ${error.message}`, dir, undefined, { cause: error });
  });
  if (!info.isDirectory()) throw new ModelLoadError(`${where} is not a folder: give the Hugging Face model folder that holds config.json`, dir);
  const config = join(dir, 'config.json');
  const configInfo = await stat(config).catch(() => undefined);
  if (configInfo?.isFile() !== true) {
    throw new ModelLoadError(`${where} is not a model folder: it has no config.json (a Hugging Face model folder holds config.json, safetensors and tokenizer.json)`, config);
  }
}
