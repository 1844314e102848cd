/**
 * A pipeline's guided generation: the vocabulary (built on the first guided
 * request) and the compiled grammars, cached by what they were compiled from,
 * so requests with the same schema or tools share one grammar and its masks.
 */
import { DEEPSEEK_R1_THINK, QWEN3_THINK, type ReasoningExit } from '../parsers/reasoning/think.js';
import type { Tokenizer, ToolDefinition } from '../text/types.js';
import { END_STACK, Stack, type Frame } from './automaton.js';
import { noCallStart, toolCallsStart } from './call-modes.js';
import { CompiledGrammar } from './grammar.js';
import { valueStart } from './json-frames.js';
import { anyObjectSpec, compileSchema } from './json-schema.js';
import type { ToolGrammar } from './tool-grammar.js';
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
  /** The reasoning parser's name (which tags end reasoning into a call). */
  readonly reasoningParser?: string;
  /** Tool-guided "auto": with toolChoice "auto", the calls the model chooses to make are guided. */
  readonly guidedTools?: boolean;
  /** More than one call per reply where the format allows it. Default true (OpenAI's parallel_tool_calls). */
  readonly parallelToolCalls?: boolean;
}

/** How the built-in reasoning parsers end reasoning into a call (parsers/reasoning/think.ts). */
const REASONING_EXITS: Record<string, readonly ReasoningExit[]> = { qwen3: QWEN3_THINK.exits, deepseek_r1: DEEPSEEK_R1_THINK.exits };

/** Compiled grammars kept per pipeline. */
const GRAMMAR_CACHE_LIMIT = 64;

export class Guide {
  private vocabulary: Vocabulary | undefined;
  private specialText: ReadonlyMap<number, Uint8Array> | undefined;
  private readonly grammars = new Map<string, CompiledGrammar>();

  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly vocabSize: number,
    /** A tool parser's grammar; throws InvalidOptionError (option `option`) for a parser that has none. */
    private readonly toolGrammar: (parser: string, option: string) => ToolGrammar,
  ) {}

  /** The grammar for a request, or undefined when nothing constrains it. Throws InvalidOptionError for what cannot be guided. */
  grammarFor(request: GuidedRequest): CompiledGrammar | undefined {
    const start = this.startFor(request);
    if (start === undefined) return undefined;
    const callsMatter = request.toolChoice === 'required' || typeof request.toolChoice === 'object' || (request.guidedTools === true && request.toolChoice !== 'none');
    const key = JSON.stringify([
      request.responseFormat,
      request.toolChoice,
      request.toolParser,
      request.reasoning,
      callsMatter ? [request.tools, request.reasoningParser, request.guidedTools === true, request.parallelToolCalls !== false] : [],
    ]);
    let grammar = this.grammars.get(key);
    if (grammar === undefined) {
      grammar = new CompiledGrammar(this.vocab(), new Stack(start(), END_STACK), this.specialTexts());
      if (this.grammars.size >= GRAMMAR_CACHE_LIMIT) this.grammars.delete(this.grammars.keys().next().value!);
      this.grammars.set(key, grammar);
    }
    return grammar;
  }

  vocab(): Vocabulary {
    this.vocabulary ??= Vocabulary.fromTokenizer(this.tokenizer, this.vocabSize);
    return this.vocabulary;
  }

  /** The text of each special token that has one (free text reads it when the reply keeps special tokens). */
  private specialTexts(): ReadonlyMap<number, Uint8Array> {
    if (this.specialText === undefined) {
      const vocab = this.vocab();
      const encoder = new TextEncoder();
      const texts = new Map<number, Uint8Array>();
      const known = Math.min(this.tokenizer.vocabSize, vocab.size);
      for (let id = 0; id < known; id++) {
        if (vocab.tokenBytes[id]) continue;
        const text = this.tokenizer.decode([id], { skipSpecialTokens: false });
        if (text.length > 0) texts.set(id, encoder.encode(text));
      }
      this.specialText = texts;
    }
    return this.specialText;
  }

  /** Compiles now (errors surface before the request runs); returns how to start. */
  private startFor(request: GuidedRequest): (() => Frame) | undefined {
    const { responseFormat, toolChoice } = request;
    if (responseFormat !== undefined) {
      const spec = responseFormat.type === 'json_object' ? anyObjectSpec() : compileSchema(responseFormat.schema, 'responseFormat.schema');
      return () => valueStart(spec);
    }
    if (request.toolParser === undefined) return undefined;
    const auto = toolChoice === undefined || toolChoice === 'auto';
    if (auto && request.guidedTools !== true) return undefined;
    const grammar = this.toolGrammar(request.toolParser, auto ? 'guidedTools' : 'toolChoice');
    // Tool-guided auto with no tools to call: nothing may start a call, as with "none".
    if (toolChoice === 'none' || (auto && request.tools.length === 0)) {
      const frame = noCallStart(grammar, request.reasoning);
      return () => frame;
    }
    const frame = toolCallsStart({
      parser: request.toolParser,
      grammar,
      tools: request.tools,
      choice: auto ? 'auto' : toolChoice,
      parallel: request.parallelToolCalls !== false,
      reasoning: request.reasoning,
      reasoningExits: request.reasoningParser === undefined ? [] : REASONING_EXITS[request.reasoningParser],
      specialTexts: new Set([...this.specialTexts().values()].map((bytes) => new TextDecoder().decode(bytes))),
    });
    return () => frame;
  }
}
