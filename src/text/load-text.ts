import { join } from 'node:path';
import { InvalidOptionError, TokenizerError } from '../errors.js';
import { MAX_FILE_BYTES, parseJsonText, readModelFile } from '../model-files/model-file.js';
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
  if (typeof modelDir !== 'string' || modelDir.trim() === '') {
    throw new InvalidOptionError('modelDir', `expected a model folder path (loadText('models/weft-demo')), got ${modelDir === '' ? 'an empty string' : typeof modelDir}`);
  }
  const tokenizerFile = join(modelDir, 'tokenizer.json');
  const configFile = join(modelDir, 'tokenizer_config.json');

  const tokenizerText = await readText(modelDir, 'tokenizer.json', MAX_FILE_BYTES.tokenizer);
  if (tokenizerText === undefined) {
    throw new TokenizerError(`${tokenizerFile} is missing: weft needs a Hugging Face tokenizer.json next to the model`);
  }
  const tokenizerJson = parseJson(tokenizerText, tokenizerFile);
  const configText = await readText(modelDir, 'tokenizer_config.json', MAX_FILE_BYTES.smallJson);
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

  const jinjaFile = await readText(modelDir, 'chat_template.jinja', MAX_FILE_BYTES.smallJson);
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

/** A file's text, or undefined when it does not exist (model-file.ts checks what it is first). */
async function readText(modelDir: string, name: string, maxBytes: number): Promise<string | undefined> {
  return (await readModelFile(modelDir, name, maxBytes))?.toString('utf8');
}

function parseJson(text: string, file: string): unknown {
  return parseJsonText(text, file, (message, cause) => new TokenizerError(message, { cause }));
}
