import { deepseekV3Corpus } from './deepseek-v3.js';
import { hermesCorpus } from './hermes.js';
import { llama3JsonCorpus } from './llama3-json.js';
import { mistralCorpus } from './mistral.js';
import { pythonicCorpus } from './pythonic.js';
import { qwen3CoderCorpus } from './qwen3coder.js';
import type { ToolCorpus } from './types.js';

export const toolCorpora: ToolCorpus[] = [qwen3CoderCorpus, hermesCorpus, llama3JsonCorpus, mistralCorpus, pythonicCorpus, deepseekV3Corpus];
export type { ToolCase, ToolCorpus } from './types.js';
