import { basename, dirname } from 'node:path';
import { ModelLoadError } from '../errors.js';
import { MAX_FILE_BYTES, parseJsonText, readModelFile } from '../model-files/model-file.js';
import type { GenerationDefaults } from './types.js';

/**
 * Reads generation_config.json into GenerationDefaults. A missing file gives {}
 * (the model simply has no defaults); a file that is not valid JSON, or whose
 * fields have the wrong type, is a ModelLoadError naming the file.
 */
export async function readGenerationConfig(file: string): Promise<GenerationDefaults> {
  const bytes = await readModelFile(dirname(file), basename(file), MAX_FILE_BYTES.smallJson);
  if (bytes === undefined) return {};
  const json = parseJsonText(bytes.toString('utf8'), file);
  return parseGenerationConfig(json, file);
}

/** Converts parsed generation_config.json. null fields count as absent (transformers writes them). */
export function parseGenerationConfig(json: unknown, file = 'generation_config.json'): GenerationDefaults {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new ModelLoadError(`${file}: expected a JSON object`, file);
  }
  const config = json as Record<string, unknown>;
  const bad = (key: string, expected: string): never => {
    throw new ModelLoadError(`${file}: ${key} must be ${expected}, got ${JSON.stringify(config[key])}`, file);
  };
  const number = (key: string, isValid: (n: number) => boolean, expected: string): number | undefined => {
    const value = config[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value) || !isValid(value)) return bad(key, expected);
    return value;
  };

  const defaults: GenerationDefaults = {};
  const eos = config.eos_token_id;
  if (eos !== undefined && eos !== null) {
    const list = Array.isArray(eos) ? eos : [eos];
    if (!list.every((id) => Number.isInteger(id) && (id as number) >= 0)) {
      bad('eos_token_id', 'a token id or a list of token ids');
    }
    defaults.eosTokenIds = [...new Set(list as number[])];
  }
  const set = <K extends keyof GenerationDefaults>(key: K, value: GenerationDefaults[K] | undefined): void => {
    if (value !== undefined) defaults[key] = value;
  };
  set('temperature', number('temperature', (n) => n >= 0, 'a number >= 0'));
  set('topK', number('top_k', (n) => Number.isInteger(n) && n >= 0, 'an integer >= 0'));
  set('topP', number('top_p', (n) => n > 0 && n <= 1, 'a number in (0, 1]'));
  set('minP', number('min_p', (n) => n >= 0 && n <= 1, 'a number in [0, 1]'));
  set('repetitionPenalty', number('repetition_penalty', (n) => n > 0, 'a number > 0'));
  set('maxLength', number('max_length', (n) => Number.isInteger(n) && n > 0, 'an integer > 0'));
  set('maxNewTokens', number('max_new_tokens', (n) => Number.isInteger(n) && n > 0, 'an integer > 0'));
  const doSample = config.do_sample;
  if (doSample !== undefined && doSample !== null) {
    if (typeof doSample !== 'boolean') bad('do_sample', 'true or false');
    defaults.doSample = doSample as boolean;
  }
  return defaults;
}
