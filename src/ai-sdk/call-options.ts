/**
 * The AI SDK's call settings as weft request options, plus the warnings the
 * spec wants for what weft cannot honour.
 *
 * Values are passed on unchecked: the pipeline validates every option and
 * rejects a bad one with InvalidOptionError naming it, before anything is queued.
 *
 * `responseFormat` and `toolChoice` are enforced by guided generation
 * (docs/guided.md). Where the pipeline cannot guide them (a tool parser
 * without a grammar, a schema keyword it does not support) language-model.ts
 * converts the call again with that guidance off (`Enforce`), and the old way
 * applies: prompt, then check, with a warning.
 */

import type { LanguageModelV3CallOptions, LanguageModelV3FunctionTool, SharedV3Warning } from '@ai-sdk/provider';
import type { ResponseFormat, ToolChoice } from '../guided/guide.js';
import type { ChatOptions, ParserOptions, SpeculativeOptions } from '../pipeline/options.js';
import type { ToolDefinition } from '../text/types.js';

/** `providerOptions.weft`: per-call settings only weft has. */
export interface WeftCallSettings {
  minP?: number;
  repetitionPenalty?: number;
  /** Higher runs first under the pipeline's "priority" scheduling policy. */
  priority?: number;
  stopTokenIds?: number[];
  ignoreEos?: boolean;
  skipSpecialTokens?: boolean;
  /** Reasoning and tool-call parsers for this call (override the pipeline's). */
  parsers?: ParserOptions;
  /** Extra chat template variables, e.g. `{ enable_thinking: false }`. */
  templateKwargs?: Record<string, unknown>;
  /** Tool-guided "auto": a call the model chooses to make is written in the parser's syntax with valid arguments (docs/guided.md). */
  guidedTools?: boolean;
  /** Whether a guided reply may make more than one call (OpenAI's parallel_tool_calls). Default true. */
  parallelToolCalls?: boolean;
  /** Speculative decoding for this call (docs/speculative.md), or false for none; default: the pipeline's. */
  speculative?: SpeculativeOptions | false;
}

const WEFT_SETTINGS: readonly (keyof WeftCallSettings)[] = [
  'minP',
  'repetitionPenalty',
  'priority',
  'stopTokenIds',
  'ignoreEos',
  'skipSpecialTokens',
  'parsers',
  'templateKwargs',
  'guidedTools',
  'parallelToolCalls',
  'speculative',
];

/** What toolChoice asked for that weft can only check afterwards (when it could not enforce it). */
export type ToolRequirement = { readonly kind: 'any' } | { readonly kind: 'named'; readonly toolName: string } | undefined;

export interface ConvertedCall {
  readonly options: ChatOptions;
  readonly warnings: SharedV3Warning[];
  readonly requirement: ToolRequirement;
}

/** Which guidance to ask the pipeline for; `false` with the reason it could not (for the warning). */
export interface Enforce {
  readonly toolChoice: true | { readonly refused: string };
  readonly responseFormat: true | { readonly refused: string };
}

const ENFORCE_ALL: Enforce = { toolChoice: true, responseFormat: true };

export function toChatOptions(call: LanguageModelV3CallOptions, defaults: WeftCallSettings = {}, enforce: Enforce = ENFORCE_ALL): ConvertedCall {
  const warnings: SharedV3Warning[] = [];
  const weftSettings = { ...defaults, ...readWeftSettings(call.providerOptions?.weft, warnings) };
  const { tools, toolChoice, requirement, disableToolParser } = selectTools(call, warnings, enforce.toolChoice);

  let responseFormat: ResponseFormat | undefined;
  if (call.responseFormat?.type === 'json') {
    if (enforce.responseFormat === true) {
      const { schema, name } = call.responseFormat;
      responseFormat = schema === undefined ? { type: 'json_object' } : { type: 'json_schema', schema, ...(name !== undefined && { name }) };
    } else {
      warnings.push({
        type: 'unsupported',
        feature: 'responseFormat',
        details: `JSON output is not constrained here (${enforce.responseFormat.refused}); the caller's own check applies`,
      });
    }
  }

  const parsers: ParserOptions | undefined = disableToolParser
    ? { ...weftSettings.parsers, tool: undefined }
    : weftSettings.parsers;
  const options: ChatOptions = {
    ...omitUndefined({
      maxTokens: call.maxOutputTokens,
      temperature: call.temperature,
      topP: call.topP,
      topK: call.topK,
      seed: call.seed,
      presencePenalty: call.presencePenalty,
      frequencyPenalty: call.frequencyPenalty,
      stop: call.stopSequences !== undefined && call.stopSequences.length > 0 ? call.stopSequences : undefined,
      signal: call.abortSignal,
      minP: weftSettings.minP,
      repetitionPenalty: weftSettings.repetitionPenalty,
      priority: weftSettings.priority,
      stopTokenIds: weftSettings.stopTokenIds,
      ignoreEos: weftSettings.ignoreEos,
      skipSpecialTokens: weftSettings.skipSpecialTokens,
      templateKwargs: weftSettings.templateKwargs,
      guidedTools: tools.length > 0 ? weftSettings.guidedTools : undefined,
      parallelToolCalls: weftSettings.parallelToolCalls,
      speculative: weftSettings.speculative,
    }),
    ...(parsers !== undefined && { parsers }),
    ...(tools.length > 0 && { tools }),
    ...(toolChoice !== undefined && { toolChoice }),
    ...(responseFormat !== undefined && { responseFormat }),
  };
  return { options, warnings, requirement };
}

/**
 * Tools and toolChoice, enforced: every choice offers all the tools and passes the choice on
 * (`tool` as `{ name }`). Not enforced (the pipeline refused): `none` offers no tools and turns
 * the tool parser off; `required` offers them all and `tool` only the named one, and the reply
 * is checked afterwards (see language-model.ts).
 */
function selectTools(
  call: LanguageModelV3CallOptions,
  warnings: SharedV3Warning[],
  enforce: Enforce['toolChoice'],
): { tools: ToolDefinition[]; toolChoice: ToolChoice | undefined; requirement: ToolRequirement; disableToolParser: boolean } {
  const functionTools: LanguageModelV3FunctionTool[] = [];
  for (const tool of call.tools ?? []) {
    if (tool.type === 'function') functionTools.push(tool);
    else warnings.push({ type: 'unsupported', feature: `provider tool ${tool.id}`, details: 'weft runs function tools only' });
  }
  const choice = call.toolChoice ?? { type: 'auto' };
  const none = { tools: [], toolChoice: undefined, requirement: undefined };
  if (functionTools.length === 0) return { ...none, disableToolParser: choice.type === 'none' };
  const all = functionTools.map(toToolDefinition);
  if (choice.type === 'auto') return { tools: all, toolChoice: undefined, requirement: undefined, disableToolParser: false };
  if (enforce === true) {
    const toolChoice: ToolChoice = choice.type === 'tool' ? { name: choice.toolName } : choice.type;
    return { tools: all, toolChoice, requirement: undefined, disableToolParser: false };
  }
  switch (choice.type) {
    case 'none':
      return { ...none, disableToolParser: true };
    case 'required':
      warnings.push({
        type: 'compatibility',
        feature: 'toolChoice',
        details: `"required" is not enforced (${enforce.refused}): the tools are offered and the reply is checked afterwards`,
      });
      return { tools: all, toolChoice: undefined, requirement: { kind: 'any' }, disableToolParser: false };
    case 'tool': {
      const named = functionTools.filter((tool) => tool.name === choice.toolName);
      warnings.push({
        type: 'compatibility',
        feature: 'toolChoice',
        details: `only "${choice.toolName}" is offered to the model, but the call is not enforced (${enforce.refused}); the reply is checked afterwards`,
      });
      return { tools: named.map(toToolDefinition), toolChoice: undefined, requirement: { kind: 'named', toolName: choice.toolName }, disableToolParser: false };
    }
  }
}

/** The AI SDK's function tool in the OpenAI / Hugging Face shape chat templates render. */
export function toToolDefinition(tool: LanguageModelV3FunctionTool): ToolDefinition {
  return {
    type: 'function',
    function: {
      name: tool.name,
      ...(tool.description !== undefined && { description: tool.description }),
      parameters: tool.inputSchema as ToolDefinition['function']['parameters'],
    },
  };
}

/**
 * LanguageModelV3 returns one completion per call, so weft's `n` has no place in it
 * (docs/parallel-sampling.md): a call is one choice.
 */
const N_UNSUPPORTED =
  'a LanguageModelV3 call returns one completion: make n calls (their full prompt blocks are shared through the prefix cache), or use pipeline.generate/chat with n for one prompt computed once';

function readWeftSettings(value: unknown, warnings: SharedV3Warning[]): WeftCallSettings {
  if (value === undefined) return {};
  const settings: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(value as Record<string, unknown>)) {
    if ((WEFT_SETTINGS as readonly string[]).includes(key)) settings[key] = setting;
    else if (key === 'n') warnings.push({ type: 'unsupported', feature: 'providerOptions.weft.n', details: N_UNSUPPORTED });
    else warnings.push({ type: 'unsupported', feature: `providerOptions.weft.${key}`, details: `known: ${WEFT_SETTINGS.join(', ')}` });
  }
  return settings as WeftCallSettings;
}

function omitUndefined<T extends Record<string, unknown>>(record: T): Partial<T> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as Partial<T>;
}
