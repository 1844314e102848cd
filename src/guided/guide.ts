/**
 * A pipeline's guided generation: the vocabulary (built on the first guided
 * request) and the compiled grammars, cached by what they were compiled from,
 * so requests with the same schema or tools share one grammar and its masks.
 */
import type { Tokenizer, ToolDefinition } from '../text/types.js';
import { END_STACK, Stack, type Frame } from './automaton.js';
import { CompiledGrammar } from './grammar.js';
import { valueStart } from './json-frames.js';
import { anyObjectSpec, compileSchema } from './json-schema.js';
import { noCallText, requiredCallGrammar } from './tool-formats.js';
import { Vocabulary } from './vocabulary.js';

export type ResponseFormat = { readonly type: 'json_schema'; readonly schema: unknown; readonly name?: string } | { readonly type: 'json_object' };
export type ToolChoice = 'auto' | 'none' | 'required' | { readonly name: string };

export interface GuidedRequest {
  readonly responseFormat?: ResponseFormat;
  readonly toolChoice?: ToolChoice;
  readonly tools: readonly ToolDefinition[];
  /** The reply's tool parser, if any. */
  readonly toolParser?: string;
  /** 'none': no reasoning parser; 'optional': the reply may start with <think>; 'open': the prompt opened it. */
  readonly reasoning: 'none' | 'optional' | 'open';
}

/** Compiled grammars kept per pipeline. */
const GRAMMAR_CACHE_LIMIT = 64;

export class Guide {
  private vocabulary: Vocabulary | undefined;
  private readonly grammars = new Map<string, CompiledGrammar>();

  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly vocabSize: number,
  ) {}

  /** The grammar for a request, or undefined when nothing constrains it. Throws InvalidOptionError for what cannot be guided. */
  grammarFor(request: GuidedRequest): CompiledGrammar | undefined {
    const start = this.startFor(request);
    if (start === undefined) return undefined;
    const key = JSON.stringify([request.responseFormat, request.toolChoice, request.toolParser, request.reasoning, request.toolChoice === undefined || request.toolChoice === 'none' ? [] : request.tools]);
    let grammar = this.grammars.get(key);
    if (grammar === undefined) {
      grammar = new CompiledGrammar(this.vocab(), new Stack(start(), END_STACK));
      if (this.grammars.size >= GRAMMAR_CACHE_LIMIT) this.grammars.delete(this.grammars.keys().next().value!);
      this.grammars.set(key, grammar);
    }
    return grammar;
  }

  vocab(): Vocabulary {
    this.vocabulary ??= Vocabulary.fromTokenizer(this.tokenizer, this.vocabSize);
    return this.vocabulary;
  }

  /** Compiles now (errors surface before the request runs); returns how to start. */
  private startFor(request: GuidedRequest): (() => Frame) | undefined {
    const { responseFormat, toolChoice } = request;
    if (responseFormat !== undefined) {
      const spec = responseFormat.type === 'json_object' ? anyObjectSpec() : compileSchema(responseFormat.schema, 'responseFormat.schema');
      return () => valueStart(spec);
    }
    if (toolChoice === undefined || toolChoice === 'auto' || request.toolParser === undefined) return undefined;
    if (toolChoice === 'none') {
      const text = noCallText(request.toolParser);
      return () => text.start();
    }
    const frame = requiredCallGrammar(request.toolParser, request.tools, toolChoice === 'required' ? undefined : toolChoice.name, request.reasoning, this.vocab().specialTokens);
    return () => frame;
  }
}
