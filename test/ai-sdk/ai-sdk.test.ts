/**
 * weft/ai-sdk driven by the real `ai` package (6.x) against weft's demo model:
 * generateText, streamText, multi-step tool use with stopWhen and real execute
 * functions, and cancelling one streamText while others in the batch finish.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { generateText, jsonSchema, Output, stepCountIs, streamText, type TextStreamPart, type ToolSet } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidOptionError, Pipeline, PipelineClosedError, type FinishReason, type ModelPipeline } from '../../src/index.js';
import { createWeft, weft, type WeftLanguageModel } from '../../src/ai-sdk/index.js';
import { createToolParser, registerToolParser } from '../../src/tool-formats/index.js';
import { demoModelDir, demoTools, demoToolSpecs, weatherIn, type RecordedCall } from './demo-tools.js';

// The AI SDK logs warnings to the console; the tests assert them instead.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const present = existsSync(join(demoModelDir, 'model.safetensors'));
if (!present) console.warn('ai-sdk.test: models/weft-demo is missing; skipping');

describe.skipIf(!present)('weft/ai-sdk with the ai package and the demo model', () => {
  let pipe: Pipeline;
  let model: WeftLanguageModel;
  const finishes: FinishReason[] = [];

  beforeAll(async () => {
    pipe = await Pipeline.create({ model: demoModelDir, threads: 1, parsers: { tool: 'qwen3coder', reasoning: 'qwen3' } });
    pipe.on('request-finish', ({ finishReason }) => finishes.push(finishReason));
    model = weft(pipe);
  });
  afterAll(async () => {
    await pipe?.close();
  });

  it('is a LanguageModelV3', () => {
    expect(model.specificationVersion).toBe('v3');
    expect(model.provider).toBe('weft');
    expect(model.modelId).toBe('weft');
  });

  it('generateText runs a tool with the right arguments, sends its result back and answers from it', async () => {
    const calls: RecordedCall[] = [];
    const result = await generateText({
      model,
      prompt: 'What is 37 times 12.5?',
      tools: demoTools(calls),
      stopWhen: stepCountIs(4),
      temperature: 0,
    });
    expect(calls).toEqual([{ name: 'calculator', input: { operation: 'multiply', a: 37, b: 12.5 }, output: { result: 462.5 } }]);
    expect(result.steps).toHaveLength(2);
    const [first, second] = result.steps;
    expect(first!.finishReason).toBe('tool-calls');
    expect(first!.reasoningText).toMatch(/calculator/);
    expect(first!.toolCalls.map((call) => [call.toolName, call.input])).toEqual([['calculator', { operation: 'multiply', a: 37, b: 12.5 }]]);
    // The second request carried the tool result back as a tool message.
    const sent = (second!.request.body as { messages: { role: string; content: string; toolCallId?: string }[] }).messages;
    const toolMessage = sent.find((message) => message.role === 'tool');
    expect(toolMessage).toMatchObject({ content: '{"result":462.5}', toolCallId: first!.toolCalls[0]!.toolCallId });
    expect(second!.finishReason).toBe('stop');
    expect(result.text).toContain('462.5');
    // Usage in the spec's shape; the second step's long shared prompt comes from the prefix cache.
    expect(second!.usage.inputTokens).toBeGreaterThan(first!.usage.inputTokens!);
    expect(second!.usage.inputTokenDetails.cacheReadTokens).toBeGreaterThan(0);
    expect(second!.usage.inputTokenDetails.noCacheTokens).toBe(second!.usage.inputTokens! - second!.usage.inputTokenDetails.cacheReadTokens!);
    expect(result.totalUsage.outputTokens).toBe(first!.usage.outputTokens! + second!.usage.outputTokens!);
  });

  it('streamText streams reasoning, tool input and the answer in the spec shape, over several steps', async () => {
    const calls: RecordedCall[] = [];
    const result = streamText({
      model,
      prompt: "What's the weather in Paris in fahrenheit?",
      tools: demoTools(calls),
      stopWhen: stepCountIs(4),
      temperature: 0,
    });
    const parts: TextStreamPart<ToolSet>[] = [];
    for await (const part of result.fullStream) parts.push(part);
    const types: string[] = parts.map((part) => part.type);
    expect(calls).toEqual([{ name: 'get_weather', input: { city: 'Paris', unit: 'fahrenheit' }, output: weatherIn('Paris', 'fahrenheit') }]);
    // Step 1: reasoning block, then the call's input streamed, then the call and its result.
    const order = ['reasoning-start', 'reasoning-delta', 'reasoning-end', 'tool-input-start', 'tool-input-delta', 'tool-input-end', 'tool-call', 'tool-result'];
    let at = -1;
    for (const type of order) {
      const next = types.indexOf(type, at + 1);
      expect(next, `${type} after index ${at} in ${types.join(' ')}`).toBeGreaterThan(at);
      at = next;
    }
    const inputStart = parts.find((part) => part.type === 'tool-input-start')!;
    const inputText = parts
      .filter((part) => part.type === 'tool-input-delta' && part.id === (inputStart as { id: string }).id)
      .map((part) => (part as { delta: string }).delta)
      .join('');
    expect(JSON.parse(inputText)).toEqual({ city: 'Paris', unit: 'fahrenheit' });
    // Step 2 answers from the result.
    expect(types.filter((type) => type === 'finish-step')).toHaveLength(2);
    expect(await result.text).toContain(String(weatherIn('Paris', 'fahrenheit').temperature));
    expect(await result.finishReason).toBe('stop');
    // Every block that started ended.
    for (const kind of ['text', 'reasoning', 'tool-input'] as const) {
      expect(types.filter((type) => type === `${kind}-start`).length).toBe(types.filter((type) => type === `${kind}-end`).length);
    }
  });

  it('aborting one streamText cancels only that request; the others in the batch complete', async () => {
    const questions = ['What is the capital of Japan?', 'What is 37 times 12.5?', 'Send an urgent email to Zoe about the budget.'];
    const controllers = questions.map(() => new AbortController());
    const before = finishes.length;
    let inFlightAtAbort = 0;
    const runs = questions.map(async (prompt, i) => {
      const result = streamText({ model, prompt, tools: demoTools(), temperature: 0, abortSignal: controllers[i]!.signal });
      const types: string[] = [];
      for await (const part of result.fullStream) {
        types.push(part.type);
        if (i === 2 && part.type === 'reasoning-delta' && !controllers[2]!.signal.aborted) {
          inFlightAtAbort = pipe.stats().running + pipe.stats().waiting;
          controllers[2]!.abort();
        }
      }
      return { types, finishReason: i === 2 ? undefined : await result.finishReason, text: i === 2 ? '' : await result.text };
    });
    const [japan, times, email] = await Promise.all(runs);
    expect(inFlightAtAbort).toBe(3);
    expect(email!.types).toContain('abort');
    expect(email!.types).not.toContain('finish-step');
    expect(japan!.finishReason).toBe('stop');
    expect(japan!.text).toMatch(/Tokyo/);
    expect(times!.finishReason).toBe('tool-calls');
    expect(times!.types).toContain('tool-call');
    // weft saw exactly one aborted request among the three; its cache blocks are free again.
    expect(finishes.slice(before).sort()).toEqual(['aborted', 'stop', 'tool_calls']);
    expect(pipe.stats().running).toBe(0);
  });

  it('maps maxOutputTokens, stopSequences, seed and providerOptions.weft', async () => {
    const tools = demoTools();
    const short = await generateText({ model, prompt: 'What is the capital of Japan?', tools, temperature: 0, maxOutputTokens: 3 });
    expect(short.finishReason).toBe('length');
    expect(short.usage.outputTokens).toBe(3);
    expect(short.providerMetadata?.weft).toMatchObject({ finishReason: 'length' });

    const full = await generateText({ model, prompt: 'What is the capital of Japan?', tools, temperature: 0 });
    const word = full.text.split(/\s+/).find((w) => w.length > 3 && full.text.indexOf(w) > 0)!;
    const stopped = await generateText({ model, prompt: 'What is the capital of Japan?', tools, temperature: 0, stopSequences: [word] });
    expect(stopped.finishReason).toBe('stop');
    expect(stopped.text).toBe(full.text.slice(0, full.text.indexOf(word)));

    // Sampled with a seed: same seed, same text.
    const sample = (seed: number) =>
      generateText({ model, prompt: 'What is the capital of Japan?', tools, temperature: 1, topK: 20, topP: 0.9, seed, maxOutputTokens: 20 });
    expect((await sample(7)).text).toBe((await sample(7)).text);

    // A weft-only setting: without thinking in the template the model still answers; unknown keys warn.
    const noThink = await generateText({
      model,
      prompt: 'What is the capital of Japan?',
      tools,
      temperature: 0,
      maxOutputTokens: 8,
      providerOptions: { weft: { repetitionPenalty: 1.1, nonsense: 1 } },
    });
    expect(noThink.warnings).toContainEqual(expect.objectContaining({ type: 'unsupported', feature: 'providerOptions.weft.nonsense' }));
  });

  it('toolChoice is enforced: required always calls, a named tool calls that one, none never calls', async () => {
    const seeds = [1, 2, 3, 4];
    // "What is the capital of Japan?" the demo model answers without a tool; "required" makes it call one.
    const required = await Promise.all(
      seeds.map((seed) => generateText({ model, prompt: 'What is the capital of Japan?', tools: demoTools(), toolChoice: 'required', temperature: 1, seed, maxOutputTokens: 300 })),
    );
    const names = new Set(Object.keys(demoTools()));
    for (const result of required) {
      expect(result.toolCalls.length, result.text).toBeGreaterThan(0);
      for (const call of result.toolCalls) expect(names.has(call.toolName)).toBe(true);
      expect(result.warnings ?? []).toEqual([]);
      expect(result.providerMetadata?.weft?.toolChoiceMet).toBeUndefined();
    }
    const named = await generateText({ model, prompt: 'What is the weather in Oslo?', tools: demoTools(), toolChoice: { type: 'tool', toolName: 'calculator' }, temperature: 1, seed: 5 });
    expect(named.toolCalls.map((call) => call.toolName)).toEqual(['calculator']);
    expect((named.request.body as { tools: unknown[]; toolChoice: unknown }).toolChoice).toEqual({ name: 'calculator' });

    const calls: RecordedCall[] = [];
    const none = await Promise.all(
      seeds.map((seed) => generateText({ model, prompt: 'What is 37 times 12.5?', tools: demoTools(calls), toolChoice: 'none', temperature: 1, seed, maxOutputTokens: 80 })),
    );
    for (const result of none) {
      expect(result.toolCalls).toEqual([]);
      expect(result.text).not.toContain('<tool_call>');
    }
    expect(calls).toEqual([]);
  });

  it('toolChoice falls back to prompt-then-check, with warnings, for a tool parser without a grammar', async () => {
    const [calculator] = demoToolSpecs();
    // Every built-in tool parser has a grammar; one of the user's own does not.
    registerToolParser('users_own', (options) => createToolParser('hermes', options));
    const direct = await model.doGenerate({
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'What is the capital of Japan?' }] }],
      tools: [calculator!],
      toolChoice: { type: 'required' },
      temperature: 0,
      maxOutputTokens: 60,
      providerOptions: { weft: { parsers: { tool: 'users_own' } } },
    });
    expect(direct.content.filter((part) => part.type === 'tool-call')).toEqual([]);
    expect(direct.warnings).toContainEqual(expect.objectContaining({ type: 'compatibility', feature: 'toolChoice', details: expect.stringMatching(/users_own tool parser has no guided grammar/) }));
    expect(direct.warnings).toContainEqual(expect.objectContaining({ type: 'other', message: expect.stringMatching(/not honoured/) }));
    expect(direct.providerMetadata?.weft).toMatchObject({ toolChoiceMet: false });
  });

  it('responseFormat json: Output.object and a raw json schema give schema-valid JSON; an unsupported keyword warns', async () => {
    const schema = {
      type: 'object',
      properties: { city: { type: 'string', maxLength: 20 }, population: { type: 'integer' }, capital: { type: 'boolean' } },
      required: ['city', 'population', 'capital'],
      additionalProperties: false,
    } as const;
    const validate = new Ajv({ strict: false }).compile(schema);
    const results = await Promise.all(
      [1, 2, 3].map((seed) => generateText({ model, prompt: 'Describe Oslo.', output: Output.object({ schema: jsonSchema<{ city: string; population: number; capital: boolean }>(schema) }), temperature: 1, seed, maxOutputTokens: 200 })),
    );
    for (const result of results) {
      expect(validate(JSON.parse(result.text)), result.text).toBe(true);
      expect(result.output).toEqual(JSON.parse(result.text));
      expect((result.request.body as { responseFormat: unknown }).responseFormat).toMatchObject({ type: 'json_schema' });
    }
    const direct = await model.doGenerate({
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'Describe Oslo.' }] }],
      responseFormat: { type: 'json', schema, name: 'city' },
      temperature: 1,
      seed: 9,
      maxOutputTokens: 200,
    });
    const text = direct.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
    expect(validate(JSON.parse(text)), text).toBe(true);
    expect(direct.finishReason.unified).toBe('stop');
    // Numeric bounds, minLength and format are enforced now (issue 30): no warning, and the output validates.
    const bounded = {
      type: 'object',
      properties: { city: { type: 'string', minLength: 1, maxLength: 20 }, days: { type: 'integer', minimum: 1, maximum: 7 }, start: { type: 'string', format: 'date' } },
      required: ['city', 'days', 'start'],
      additionalProperties: false,
    } as const;
    const validateBounded = new Ajv({ strict: false }).compile(bounded);
    for (const seed of [1, 2, 3]) {
      const enforced = await model.doGenerate({
        prompt: [{ role: 'user', content: [{ type: 'text', text: 'Plan a trip.' }] }],
        responseFormat: { type: 'json', schema: bounded },
        temperature: 1,
        seed,
        maxOutputTokens: 200,
      });
      const out = enforced.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
      const value = JSON.parse(out) as { days: number; start: string };
      expect(validateBounded(value), out).toBe(true);
      expect(value.days >= 1 && value.days <= 7, out).toBe(true);
      expect(/^\d{4}-\d{2}-\d{2}$/.test(value.start), out).toBe(true);
      expect(enforced.warnings.filter((w) => w.type === 'unsupported' && w.feature === 'responseFormat')).toEqual([]);
    }
    // `not` cannot be guided: the call runs unconstrained and says so.
    const weakened = await model.doGenerate({
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'Hi!' }] }],
      responseFormat: { type: 'json', schema: { type: 'string', not: { const: 'a' } } },
      temperature: 0,
      maxOutputTokens: 8,
    });
    expect(weakened.warnings).toContainEqual(expect.objectContaining({ type: 'unsupported', feature: 'responseFormat', details: expect.stringMatching(/"not"/) }));
  });

  it('includeRawChunks passes weft’s own stream parts through as raw parts', async () => {
    const { stream } = await model.doStream({
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'What is the capital of Japan?' }] }],
      tools: demoToolSpecs(),
      temperature: 0,
      includeRawChunks: true,
    });
    const raw: { type: string }[] = [];
    for await (const part of stream) if (part.type === 'raw') raw.push(part.rawValue as { type: string });
    expect(raw.map((part) => part.type)).toEqual(expect.arrayContaining(['reasoning-delta', 'text-delta', 'finish']));
    expect(raw.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
  });

  it('rejects bad settings with weft’s typed errors, before anything is queued', async () => {
    const started = pipe.stats().requests.started;
    await expect(generateText({ model, prompt: 'Hi', temperature: -1, maxRetries: 0 })).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(
      generateText({ model, messages: [{ role: 'user', content: [{ type: 'image', image: new Uint8Array([1, 2, 3]) }] }], maxRetries: 0 }),
    ).rejects.toThrow(/read text only/);
    expect(pipe.stats().requests.started).toBe(started);
  });
});

describe.skipIf(!present)('pipeline lifetime', () => {
  it('a provider given options opens the pipeline once on first use and closes it; one given a Pipeline leaves it open', async () => {
    const provider = createWeft({ pipeline: { model: demoModelDir, threads: 1, parsers: { tool: 'qwen3coder', reasoning: 'qwen3' } } });
    expect(provider('demo').modelId).toBe('demo');
    expect(provider.languageModel().modelId).toBe('weft-demo');
    const tools = demoTools();
    const [a, b] = await Promise.all([
      generateText({ model: provider(), prompt: 'What is the capital of Japan?', tools, temperature: 0, maxOutputTokens: 4 }),
      generateText({ model: provider(), prompt: 'What is the capital of Japan?', tools, temperature: 0, maxOutputTokens: 4 }),
    ]);
    expect(a.text).toBe(b.text);
    const opened = await provider.pipeline();
    expect((opened as ModelPipeline).stats().requests.started).toBe(2);
    await provider.close();
    await expect(opened.generate('x', { maxTokens: 1 })).rejects.toBeInstanceOf(PipelineClosedError);
    await expect(generateText({ model: provider(), prompt: 'Hi', maxRetries: 0 })).rejects.toBeInstanceOf(PipelineClosedError);

    const mine = await Pipeline.create({ model: demoModelDir, threads: 1 });
    const borrowed = createWeft({ pipeline: mine });
    await borrowed.close();
    const model = weft(mine);
    await model.close();
    expect((await mine.generate('The', { maxTokens: 1 })).usage.completionTokens).toBe(1);
    await mine.close();
  });

  it('weft(folder) owns its pipeline', async () => {
    const model = weft(demoModelDir, { defaults: { parsers: { tool: 'qwen3coder', reasoning: 'qwen3' } } });
    const result = await generateText({ model, prompt: 'What is 37 times 12.5?', tools: demoTools(), temperature: 0 });
    expect(result.toolCalls.map((call) => call.input)).toEqual([{ operation: 'multiply', a: 37, b: 12.5 }]);
    const pipeline = await model.pipeline();
    await model.close();
    await expect(pipeline.generate('x', { maxTokens: 1 })).rejects.toBeInstanceOf(PipelineClosedError);
  });
});
