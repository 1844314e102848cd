/**
 * weft/langchain's ChatWeft driven by the real @langchain/core against weft's demo model:
 * bindTools with real tools, the tool result going back as a ToolMessage, streaming chunks
 * (text tokens through callbacks, reasoning, tool-call chunks), abort, stop, tool_choice,
 * pipeline ownership and the published bundle.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AIMessageChunk, HumanMessage, SystemMessage, ToolMessage, type AIMessage } from '@langchain/core/messages';
import { tool, type StructuredToolInterface } from '@langchain/core/tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortError, InvalidOptionError, Pipeline, PipelineClosedError } from '../../src/index.js';
import { ChatWeft, toChatMessages } from '../../src/langchain/index.js';
import { createToolParser, registerToolParser } from '../../src/tool-formats/index.js';
import { demoModelDir, toolDefinitions, weatherIn } from '../ai-sdk/demo-tools.js';

const root = join(demoModelDir, '..', '..');
const present = existsSync(join(demoModelDir, 'model.safetensors'));
if (!present) console.warn('langchain chat-weft.test: models/weft-demo is missing; skipping');

/** The demo model's tools as LangChain tools with real implementations; calls are recorded. */
function demoTools(calls: { name: string; input: Record<string, any> }[] = []): StructuredToolInterface[] {
  const run: Record<string, (input: Record<string, any>) => unknown> = {
    calculator: ({ a, b, operation }) => ({ result: operation === 'multiply' ? a * b : NaN }),
    get_weather: ({ city, unit }) => weatherIn(city, unit),
  };
  return toolDefinitions.map((definition) =>
    tool(
      async (input: Record<string, any>) => {
        calls.push({ name: definition.function.name, input });
        return JSON.stringify(run[definition.function.name]?.(input) ?? { status: 'done' });
      },
      { name: definition.function.name, description: definition.function.description ?? '', schema: definition.function.parameters as object },
    ),
  );
}

describe('toChatMessages (LangChain messages)', () => {
  it('maps system, human, ai (reasoning, tool calls) and tool messages', () => {
    const messages = toChatMessages([
      new SystemMessage('Be brief.'),
      new HumanMessage({ content: [{ type: 'text', text: 'What is 2+3?' }] }),
      new AIMessageChunk({
        content: '',
        additional_kwargs: { reasoning_content: 'Add.' },
        tool_calls: [{ id: 'c1', name: 'calculator', args: { operation: 'add', a: 2, b: 3 }, type: 'tool_call' }],
      }),
      new ToolMessage({ content: '{"result":5}', tool_call_id: 'c1', name: 'calculator' }),
    ]);
    expect(messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is 2+3?' },
      { role: 'assistant', content: '', reasoning: 'Add.', toolCalls: [{ id: 'c1', name: 'calculator', arguments: { operation: 'add', a: 2, b: 3 } }] },
      { role: 'tool', content: '{"result":5}', toolCallId: 'c1', name: 'calculator' },
    ]);
    expect(() => toChatMessages([new HumanMessage({ content: [{ type: 'image_url', image_url: 'data:,' }] })])).toThrow(InvalidOptionError);
  });
});

describe.skipIf(!present)('ChatWeft with @langchain/core and the demo model', () => {
  let pipe: Pipeline;
  beforeAll(async () => {
    pipe = await Pipeline.create({ model: demoModelDir, threads: 1, parsers: { tool: 'qwen3coder', reasoning: 'qwen3' } });
  });
  afterAll(async () => {
    await pipe?.close();
  });

  it('bindTools: the tool is called with the right arguments, its result goes back, the answer uses it', async () => {
    const calls: { name: string; input: Record<string, any> }[] = [];
    const tools = demoTools(calls);
    const model = new ChatWeft({ pipeline: pipe, temperature: 0 }).bindTools(tools);
    const question = [new HumanMessage('What is 37 times 12.5?')];
    const first = (await model.invoke(question)) as AIMessage;
    expect(first.tool_calls?.map((call) => [call.name, call.args])).toEqual([['calculator', { operation: 'multiply', a: 37, b: 12.5 }]]);
    expect(first.additional_kwargs.reasoning_content).toMatch(/calculator/);
    expect(first.response_metadata.finish_reason).toBe('tool_calls');
    expect(first.usage_metadata).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number) });
    const calculator = tools.find((t) => t.name === 'calculator')!;
    const result = (await calculator.invoke(first.tool_calls![0]!)) as ToolMessage;
    expect(calls).toEqual([{ name: 'calculator', input: { operation: 'multiply', a: 37, b: 12.5 } }]);
    expect(result.tool_call_id).toBe(first.tool_calls![0]!.id);
    const second = (await model.invoke([...question, first, result])) as AIMessage;
    expect(second.tool_calls).toEqual([]);
    expect(second.text).toContain('462.5');
    expect(second.usage_metadata?.input_token_details?.cache_read).toBeGreaterThan(0);
  });

  it('streams text tokens (through callbacks too), reasoning and tool-call chunks', async () => {
    const model = new ChatWeft({ pipeline: pipe, temperature: 0 }).bindTools(demoTools());
    const tokens: string[] = [];
    let reply: AIMessageChunk | undefined;
    let chunks = 0;
    const stream = await model.stream([new HumanMessage("What's the weather in Paris in fahrenheit?")], {
      callbacks: [{ handleLLMNewToken: (token: string) => void tokens.push(token) }],
    });
    for await (const chunk of stream) {
      chunks++;
      reply = reply === undefined ? chunk : reply.concat(chunk);
    }
    expect(chunks).toBeGreaterThan(10);
    expect(reply!.tool_calls?.map((call) => [call.name, call.args])).toEqual([['get_weather', { city: 'Paris', unit: 'fahrenheit' }]]);
    expect(reply!.additional_kwargs.reasoning_content).toMatch(/get_weather/);

    const answer = await new ChatWeft({ pipeline: pipe, temperature: 0 })
      .bindTools(demoTools())
      .stream([new HumanMessage('What is the capital of Japan?')], { callbacks: [{ handleLLMNewToken: (token: string) => void tokens.push(token) }] });
    let text = '';
    for await (const chunk of answer) text += chunk.text;
    expect(text).toMatch(/Tokyo/);
    expect(tokens.join('')).toBe(text);
  });

  it('aborting one call cancels only that request; the others finish', async () => {
    const model = new ChatWeft({ pipeline: pipe, temperature: 0 }).bindTools(demoTools());
    const controller = new AbortController();
    // The other two first, so they are in flight when the third is aborted.
    const others = Promise.all(
      ['What is the capital of Japan?', 'What is 37 times 12.5?'].map((q) => model.invoke([new HumanMessage(q)]) as Promise<AIMessage>),
    );
    const aborted = (async () => {
      const stream = await model.stream([new HumanMessage('Send an urgent email to Zoe about the budget.')], { signal: controller.signal });
      for await (const _chunk of stream) controller.abort();
    })();
    await expect(aborted).rejects.toThrow(/abort/i);
    // The engine applies the abort between steps: one step later only the other two run.
    await new Promise((resolve) => pipe.once('step', resolve));
    await new Promise((resolve) => pipe.once('step', resolve));
    expect(pipe.stats().running).toBe(2);
    const [japan, times] = await others;
    expect(japan!.text).toMatch(/Tokyo/);
    expect(times!.tool_calls?.[0]?.name).toBe('calculator');
    expect(pipe.stats().running).toBe(0);
    // A signal already aborted: weft's AbortError (or LangChain's own) and nothing generated.
    const gone = new AbortController();
    gone.abort();
    await expect(model.invoke([new HumanMessage('Hi')], { signal: gone.signal })).rejects.toSatisfy(
      (error: unknown) => error instanceof AbortError || (error instanceof Error && /abort/i.test(error.message)),
    );
  });

  it('stop, per-call weft options, tool_choice none, any and a named tool (enforced)', async () => {
    const model = new ChatWeft({ pipeline: pipe, temperature: 0 });
    const tools = demoTools();
    const full = (await model.bindTools(tools).invoke([new HumanMessage('What is the capital of Japan?')])) as AIMessage;
    const stopped = (await model.bindTools(tools).invoke([new HumanMessage('What is the capital of Japan?')], { stop: ['Tokyo'] })) as AIMessage;
    expect(stopped.text).toBe(full.text.slice(0, full.text.indexOf('Tokyo')));
    const short = (await model.bindTools(tools).invoke([new HumanMessage('What is the capital of Japan?')], { weft: { maxTokens: 3 } })) as AIMessage;
    expect(short.usage_metadata?.output_tokens).toBe(3);
    expect(short.response_metadata.finish_reason).toBe('length');
    const none = (await model.bindTools(tools, { tool_choice: 'none' }).invoke([new HumanMessage('What is 37 times 12.5?')], { weft: { maxTokens: 40 } })) as AIMessage;
    expect(none.tool_calls).toEqual([]);
    const named = (await model.bindTools(tools, { tool_choice: 'calculator' }).invoke([new HumanMessage('What is 37 times 12.5?')])) as AIMessage;
    expect(named.tool_calls?.map((call) => call.name)).toEqual(['calculator']);
    // Enforced by guided generation: a question the demo model answers without a tool still calls
    // one under "any", and the named tool even when the question is about another.
    for (const seed of [1, 2, 3]) {
      const forced = (await model.bindTools(tools, { tool_choice: 'any' }).invoke([new HumanMessage('What is the capital of Japan?')], { weft: { temperature: 1, seed } })) as AIMessage;
      expect(forced.tool_calls?.length, forced.text).toBeGreaterThan(0);
    }
    const other = (await model.bindTools(tools, { tool_choice: { type: 'function', function: { name: 'convert_units' } } }).invoke([new HumanMessage('What is the weather in Oslo?')])) as AIMessage;
    expect(other.tool_calls?.map((call) => call.name)).toEqual(['convert_units']);
    const noneHot = (await model.bindTools(tools, { tool_choice: 'none' }).invoke([new HumanMessage('What is 37 times 12.5?')], { weft: { temperature: 1, seed: 4, maxTokens: 80 } })) as AIMessage;
    expect(noneHot.tool_calls).toEqual([]);
    // A tool parser without a grammar (every built-in one has one): prompted as before, not refused.
    registerToolParser('users_own', (options) => createToolParser('hermes', options));
    const unguided = (await model.bindTools(tools, { tool_choice: 'calculator' }).invoke([new HumanMessage('What is 37 times 12.5?')], { weft: { parsers: { tool: 'users_own' }, maxTokens: 8 } })) as AIMessage;
    expect(unguided.usage_metadata?.output_tokens).toBe(8);
    await expect(model.invoke([new HumanMessage('Hi')], { weft: { temperature: -1 } })).rejects.toBeInstanceOf(InvalidOptionError);
  });

  it('tool-guided auto (guidedTools) and parallel_tool_calls reach the pipeline', async () => {
    const tools = demoTools();
    const guided = new ChatWeft({ pipeline: pipe, guidedTools: true, temperature: 1 });
    let calls = 0;
    for (const seed of [1, 2, 3]) {
      const reply = (await guided.bindTools(tools).invoke([new HumanMessage('What is the weather in Oslo?')], { weft: { seed, maxTokens: 120 } })) as AIMessage;
      for (const call of reply.tool_calls ?? []) expect(tools.map((tool) => tool.name)).toContain(call.name);
      calls += reply.tool_calls?.length ?? 0;
    }
    expect(calls).toBeGreaterThan(0);
    // "any" with parallel_tool_calls false: exactly one call, and the request ends with it.
    const model = new ChatWeft({ pipeline: pipe, temperature: 1 });
    for (const seed of [1, 2]) {
      const one = (await model.bindTools(tools, { tool_choice: 'any', parallel_tool_calls: false }).invoke([new HumanMessage('What is 37 times 12.5?')], { weft: { seed } })) as AIMessage;
      expect(one.tool_calls?.length).toBe(1);
      expect(one.response_metadata.finish_reason).toBe('tool_calls');
    }
    await expect(model.invoke([new HumanMessage('Hi')], { parallel_tool_calls: 'no' as never })).rejects.toBeInstanceOf(InvalidOptionError);
  });

  it('opens and closes a pipeline of its own when given options; leaves yours open', async () => {
    const owning = new ChatWeft({ pipeline: { model: demoModelDir, threads: 1 }, maxTokens: 2 });
    expect((await owning.invoke([new HumanMessage('Hi')])).usage_metadata?.output_tokens).toBe(2);
    const opened = await owning.pipeline();
    await owning.close();
    await expect(opened.generate('x', { maxTokens: 1 })).rejects.toBeInstanceOf(PipelineClosedError);
    await new ChatWeft({ pipeline: pipe }).close();
    expect((await pipe.generate('The', { maxTokens: 1 })).usage.completionTokens).toBe(1);
  });
});

describe('the weft/langchain bundle', () => {
  const built = existsSync(join(root, 'dist', 'langchain.js')) && existsSync(join(root, 'dist', 'langchain.cjs'));
  it.skipIf(!built)('resolves through the package exports and loads as ESM and CommonJS', async () => {
    const require = createRequire(import.meta.url);
    expect(require.resolve('weft/langchain')).toBe(join(root, 'dist', 'langchain.cjs'));
    const esm = (await import(pathToFileURL(join(root, 'dist', 'langchain.js')).href)) as Record<string, unknown>;
    const cjs = require(join(root, 'dist', 'langchain.cjs')) as Record<string, unknown>;
    expect(typeof esm.ChatWeft).toBe('function');
    expect(typeof cjs.ChatWeft).toBe('function');
  });
});
