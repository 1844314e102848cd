import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TokenizerError } from '../errors.js';
import { ChatTemplate, templatesFromConfig } from './chat-template.js';
import { readGenerationConfig } from './generation-config.js';
import { HfTokenizer } from './hf-tokenizer.js';
import type { TextSource } from './sandbox/protocol.js';
import { specialTokenContent } from './special-tokens.js';
import type { GenerationDefaults } from './types.js';

export interface TextAssets {
  tokenizer: HfTokenizer;
  /** Undefined when the model has no chat template (chat() then fails with ChatTemplateError). */
  chatTemplate: ChatTemplate | undefined;
  generationDefaults: GenerationDefaults;
  /** The files the tokenizer and templates were built from, for the text sandbox's worker to build its own. */
  source: TextSource;
}

/**
 * Loads the text side of a Hugging Face model folder: tokenizer.json +
 * tokenizer_config.json, the chat template (chat_template.jinja wins over
 * tokenizer_config.json's, as in transformers) and generation_config.json.
 */
export async function loadText(modelDir: string): Promise<TextAssets> {
  const tokenizerFile = join(modelDir, 'tokenizer.json');
  const configFile = join(modelDir, 'tokenizer_config.json');

  const tokenizerText = await readText(tokenizerFile);
  if (tokenizerText === undefined) {
    throw new TokenizerError(`${tokenizerFile} is missing: weft needs a Hugging Face tokenizer.json next to the model`);
  }
  const tokenizerJson = parseJson(tokenizerText, tokenizerFile);
  const configText = await readText(configFile);
  const tokenizerConfig = configText === undefined ? {} : parseJson(configText, configFile);
  if (tokenizerConfig === null || typeof tokenizerConfig !== 'object' || Array.isArray(tokenizerConfig)) {
    throw new TokenizerError(`${configFile}: expected a JSON object`);
  }
  const config = tokenizerConfig as Record<string, unknown>;

  const generationDefaults = await readGenerationConfig(join(modelDir, 'generation_config.json'));
  const tokenizer = new HfTokenizer({
    tokenizerJson,
    tokenizerConfig: config,
    extraEosTokenIds: generationDefaults.eosTokenIds,
    file: tokenizerFile,
  });

  const jinjaFile = await readText(join(modelDir, 'chat_template.jinja'));
  const templates = jinjaFile !== undefined ? new Map([['default', jinjaFile]]) : templatesFromConfig(config, configFile);
  const specialTokens = { bosToken: specialTokenContent(config.bos_token), eosToken: specialTokenContent(config.eos_token) };
  const chatTemplate = templates ? new ChatTemplate(templates, specialTokens) : undefined;
  const source: TextSource = {
    tokenizerText,
    tokenizerConfig: config,
    extraEosTokenIds: generationDefaults.eosTokenIds,
    file: tokenizerFile,
    templates: templates ? [...templates] : undefined,
    specialTokens,
  };
  return { tokenizer, chatTemplate, generationDefaults, source };
}

/** File text, or undefined when the file does not exist. */
async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new TokenizerError(`${file} could not be read: ${(error as Error).message}`, { cause: error });
  }
}

function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new TokenizerError(`${file} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
}
