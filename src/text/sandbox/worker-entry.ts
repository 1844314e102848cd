/**
 * The text sandbox's worker process: builds the model's tokenizer and chat
 * templates from their sources (the first message) and runs one job at a time.
 * Nothing here is trusted to end: the host gives each job a deadline and this
 * process a heap limit, and kills it when either is passed.
 */

import { WeftError } from '../../errors.js';
import { ChatTemplate } from '../chat-template.js';
import { HfTokenizer } from '../hf-tokenizer.js';
import type { TextJob, TextJobErrorCode, TextReply, TextSource } from './protocol.js';

const post = (reply: TextReply): void => void process.send!(reply);

let tokenizer: HfTokenizer;
let template: ChatTemplate | undefined;
process.once('message', (source: TextSource) => {
  try {
    start(source);
    process.on('message', (job: TextJob) => post(run(job)));
    post({ kind: 'ready' });
  } catch (error) {
    post({ kind: 'startup-failed', message: (error as Error).message });
  }
});
// The host going away ends this process (its IPC channel closes).
process.on('disconnect', () => process.exit(0));

function start(source: TextSource): void {
  tokenizer = new HfTokenizer({
    tokenizerJson: JSON.parse(source.tokenizerText),
    tokenizerConfig: source.tokenizerConfig,
    extraEosTokenIds: source.extraEosTokenIds,
    file: source.file,
  });
  template = source.templates ? new ChatTemplate(new Map(source.templates), source.specialTokens) : undefined;
}

function run(job: TextJob): TextReply {
  try {
    if (job.kind === 'encode') return { kind: 'done', id: job.id, value: tokenizer.encode(job.text, { addSpecialTokens: job.addSpecialTokens }) };
    if (template === undefined) return { kind: 'failed', id: job.id, code: 'CHAT_TEMPLATE_ERROR', message: 'the model has no chat template' };
    const text = template.render(job.messages, job.options);
    if (text.length > job.maxChars) {
      return { kind: 'failed', id: job.id, code: 'PROMPT_TOO_LONG', message: `the chat template rendered ${text.length} characters, more than the model's context can hold (${job.maxChars})` };
    }
    return { kind: 'done', id: job.id, value: text };
  } catch (error) {
    const code: TextJobErrorCode = error instanceof WeftError && error.code === 'TOKENIZER_ERROR' ? 'TOKENIZER_ERROR' : job.kind === 'encode' ? 'TOKENIZER_ERROR' : 'CHAT_TEMPLATE_ERROR';
    return { kind: 'failed', id: job.id, code, message: (error as Error).message };
  }
}
