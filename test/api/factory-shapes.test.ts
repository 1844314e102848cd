/**
 * Every public factory, given the wrong shape (nothing, a string where an object goes, an object
 * of the wrong shape), throws InvalidOptionError naming the option and saying the calls it takes;
 * the documented shapes still work. No model is opened: pipelines come from the test backend.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ChatTemplate,
  CpuBackend,
  createParserChain,
  createReasoningParser,
  createToolParser,
  HfTokenizer,
  InvalidOptionError,
  loadText,
  OpenVinoBackend,
  Pipeline,
  PipelineMetrics,
  RemotePipeline,
  WeftServer,
} from '../../src/index.js';
import { createWeft, weft } from '../../src/ai-sdk/index.js';
import { ChatWeft } from '../../src/langchain/index.js';
import { ByteTokenizer } from '../support/byte-tokenizer.js';
import { TestBackend } from '../support/test-backend.js';

const demo = join(import.meta.dirname, '../../models/weft-demo');
const any = (value: unknown): never => value as never;

/** `run()` throws (or rejects with) InvalidOptionError for `option`, its message matching `text`. */
async function refuses(run: () => unknown, option: string, text: RegExp): Promise<void> {
  let error: unknown;
  try {
    await run();
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(InvalidOptionError);
  expect((error as InvalidOptionError).option).toBe(option);
  expect((error as Error).message).toMatch(text);
}

let pipe: Pipeline;
beforeAll(async () => {
  pipe = await Pipeline.create({ backend: new TestBackend(), tokenizer: new ByteTokenizer() });
});
afterAll(async () => {
  await pipe.close();
});

describe('Pipeline.create', () => {
  it('refuses nothing and a bare folder string, saying the call', async () => {
    await refuses(() => Pipeline.create(any(undefined)), 'options', /got undefined: call Pipeline\.create\(\{ model: 'path\/to\/model' \}\)/);
    await refuses(() => Pipeline.create(any('models/weft-demo')), 'options', /got the string "models\/weft-demo": call Pipeline\.create\(\{ model: "models\/weft-demo" \}\)/);
  });
});

describe('createWeft', () => {
  it('refuses nothing, a string, a Pipeline and a settings object of the wrong shape, saying the call', async () => {
    await refuses(() => createWeft(any(undefined)), 'settings', /got undefined\. Call createWeft\(\{ pipeline/);
    await refuses(() => createWeft(any('models/weft-demo')), 'settings', /createWeft\(\{ pipeline: "models\/weft-demo" \}\), or weft\("models\/weft-demo"\)/);
    await refuses(() => createWeft(any(pipe)), 'settings', /got a Pipeline: pass it as createWeft\(\{ pipeline: pipe \}\)/);
    // The TypeError: Pipeline.create options beside `pipeline` instead of under it.
    await refuses(() => createWeft(any({ model: 'models/weft-demo' })), 'pipeline', /createWeft\(\{ pipeline: \{ model: "models\/weft-demo", \.\.\. \} \}\) or createWeft\(\{ pipeline: "models\/weft-demo" \}\)/);
    await refuses(() => createWeft(any({})), 'pipeline', /missing\. Call createWeft/);
    await refuses(() => createWeft(any({ pipeline: 42 })), 'pipeline', /expected a Pipeline you opened, Pipeline\.create options .* got the number 42/);
    await refuses(() => createWeft(any({ pipeline: {} })), 'pipeline', /got an object with no keys/);
    await refuses(() => createWeft(any({ pipeline: '' })), 'pipeline', /empty string/);
    await refuses(() => createWeft(any({ pipeline: demo, parsers: { tool: 'hermes' } })), 'parsers', /not a createWeft setting \(it takes pipeline, modelId, defaults\)/);
    await refuses(() => createWeft(any({ pipeline: demo, modelId: 7 })), 'modelId', /expected a string/);
    await refuses(() => createWeft(any({ pipeline: demo, defaults: 'x' })), 'defaults', /expected an object/);
  });

  it('takes the documented shapes', async () => {
    const borrowed = createWeft({ pipeline: pipe });
    expect(await borrowed.pipeline()).toBe(pipe);
    expect(borrowed('label').modelId).toBe('label');
    // Options and a folder open nothing until first use.
    expect(createWeft({ pipeline: { model: demo, threads: 1 } })().modelId).toBe('weft-demo');
    expect(createWeft({ pipeline: demo, modelId: 'mine', defaults: { templateKwargs: {} } })().modelId).toBe('mine');
  });
});

describe('weft', () => {
  it('refuses nothing, { pipeline } and objects that are not Pipeline.create options', async () => {
    await refuses(() => weft(any(undefined)), 'model', /got undefined\. Call weft\(pipeline\), weft\('models\/weft-demo'\)/);
    await refuses(() => weft(any({ pipeline: pipe })), 'model', /not \{ pipeline \}.*is the shape of createWeft/);
    await refuses(() => weft(any({ modle: demo })), 'model', /got an object with keys modle/);
    await refuses(() => weft(any(42)), 'model', /got the number 42/);
    await refuses(() => weft(demo, any('my-id')), 'settings', /weft\(model, \{ modelId: "my-id" \}\)/);
    await refuses(() => weft(demo, any({ parsers: {} })), 'parsers', /not a weft setting/);
  });

  it('takes the documented shapes', () => {
    expect(weft(pipe).modelId).toBe('weft');
    expect(weft(demo).modelId).toBe('weft-demo');
    expect(weft({ model: demo, threads: 1 }, { modelId: 'x', defaults: {} }).modelId).toBe('x');
  });
});

describe('ChatWeft', () => {
  it('refuses nothing, a string, a Pipeline and Pipeline.create options beside pipeline', async () => {
    await refuses(() => new ChatWeft(any(undefined)), 'fields', /got undefined\. Call new ChatWeft\(\{ pipeline/);
    await refuses(() => new ChatWeft(any('models/weft-demo')), 'fields', /new ChatWeft\(\{ pipeline: "models\/weft-demo" \}\)/);
    await refuses(() => new ChatWeft(any(pipe)), 'fields', /new ChatWeft\(\{ pipeline: pipe \}\)/);
    await refuses(() => new ChatWeft(any({ model: demo, temperature: 0 })), 'pipeline', /under pipeline, not beside it/);
    await refuses(() => new ChatWeft(any({ temperature: 0 })), 'pipeline', /missing\. Call new ChatWeft/);
    await refuses(() => new ChatWeft(any({ pipeline: 5 })), 'pipeline', /got the number 5/);
  });

  it('takes the documented shapes', async () => {
    expect(await new ChatWeft({ pipeline: pipe, temperature: 0 }).pipeline()).toBe(pipe);
    new ChatWeft({ pipeline: { model: demo, threads: 1 } });
    new ChatWeft({ pipeline: demo });
  });
});

describe('RemotePipeline.create', () => {
  const call = /RemotePipeline\.create\(\{ remote: \{ baseURL/;
  it('refuses nothing, a URL string, the remote settings without { remote }, and a wrong remote', async () => {
    await refuses(() => RemotePipeline.create(any(undefined)), 'options', call);
    await refuses(() => RemotePipeline.create(any('http://gpu-box:8000/v1')), 'options', /got the string "http:\/\/gpu-box:8000\/v1"/);
    await refuses(() => RemotePipeline.create(any({ baseURL: 'http://gpu-box:8000/v1', model: 'm' })), 'remote', /go under remote, not beside it/);
    await refuses(() => RemotePipeline.create(any({ remote: 'http://gpu-box:8000/v1' })), 'remote', /expected \{ baseURL, model, \.\.\. \}, got the string/);
    await refuses(() => RemotePipeline.create(any({ remote: { baseUrl: 'http://gpu-box:8000/v1', model: 'm' } })), 'remote.baseUrl', /unknown option \(remote takes baseURL, model/);
    await refuses(() => RemotePipeline.create(any({ remote: { baseURL: 'http://x/v1', model: 'm' }, threads: 2 })), 'threads', /takes remote only/);
    await refuses(() => RemotePipeline.create(any({ remote: { baseURL: 'http://x/v1', model: 'm', checkModel: 'no' } })), 'remote.checkModel', /true or false/);
    await refuses(() => RemotePipeline.create(any({ remote: { baseURL: 'http://x/v1', model: 'm', headers: { a: 1 } } })), 'remote.headers', /string values/);
    await refuses(() => Pipeline.create({ remote: any('http://gpu-box:8000/v1') }), 'remote', /got the string/);
  });

  it('takes the documented shape', async () => {
    const remote = await RemotePipeline.create({ remote: { baseURL: 'http://127.0.0.1:9/v1', model: 'm', apiKey: 'k', headers: { 'x-a': 'b' }, checkModel: false } });
    expect(remote.model).toBe('m');
    await remote.close();
  });
});

describe('WeftServer.start', () => {
  it('refuses nothing, a folder where the pipeline goes, and wrong options', async () => {
    await refuses(() => WeftServer.start(any(undefined)), 'options', /WeftServer\.start\(\{ pipeline, modelName/);
    await refuses(() => WeftServer.start(any({ pipeline: demo, modelName: 'x' })), 'pipeline', /got the string .*open it first/);
    await refuses(() => WeftServer.start(any({ pipeline: { model: demo }, modelName: 'x' })), 'pipeline', /open it first/);
    await refuses(() => WeftServer.start(any({ pipeline: pipe })), 'modelName', /non-empty string/);
    await refuses(() => WeftServer.start(any({ pipeline: pipe, modelName: 'x', port: '8000' })), 'port', /integer in \[0, 65535\]/);
    await refuses(() => WeftServer.start(any({ pipeline: pipe, modelName: 'x', prot: 8000 })), 'prot', /not a WeftServer option/);
    await refuses(() => WeftServer.start(any({ pipeline: pipe, modelName: 'x', metrics: {} })), 'metrics', /PipelineMetrics/);
  });

  it('takes the documented shape', async () => {
    const server = await WeftServer.start({ pipeline: pipe, modelName: 'test', port: 0, host: '127.0.0.1', parsers: {}, metrics: new PipelineMetrics(pipe) });
    expect(server.port).toBeGreaterThan(0);
    await server.close();
  });
});

describe('PipelineMetrics', () => {
  it('refuses what is not a pipeline', async () => {
    await refuses(() => new PipelineMetrics(any(undefined)), 'source', /expected a Pipeline .* got undefined/);
    await refuses(() => new PipelineMetrics(any(demo)), 'source', /got the string/);
    await refuses(() => new PipelineMetrics(any({ model: demo })), 'source', /an object without stats\(\), on\(\) and off\(\)/);
  });

  it('takes a pipeline', () => {
    const metrics = new PipelineMetrics(pipe);
    expect(metrics.snapshot().steps).toBeGreaterThanOrEqual(0);
    metrics.detach();
  });
});

describe('text, backend and parser factories', () => {
  it('refuse the wrong shapes', async () => {
    await refuses(() => new ChatTemplate(any(undefined)), 'templates', /a template string or a Map/);
    await refuses(() => new ChatTemplate(any({ default: '{{ x }}' })), 'templates', /a Map of named templates/);
    await refuses(() => new ChatTemplate(any(new Map([['default', 3]]))), 'templates.default', /the template's text/);
    await refuses(() => new HfTokenizer(any(undefined)), 'source', /expected \{ tokenizerJson, tokenizerConfig \}.*loadText\(folder\)/);
    await refuses(() => new HfTokenizer(any(demo)), 'source', /got the string/);
    await refuses(() => new HfTokenizer(any({ tokenizerJson: {} })), 'source.tokenizerConfig', /tokenizer_config\.json/);
    await refuses(() => loadText(any(undefined)), 'modelDir', /loadText\('models\/weft-demo'\)/);
    await refuses(() => CpuBackend.load(any(undefined)), 'modelDir', /CpuBackend\.load\('models\/weft-demo'/);
    await refuses(() => CpuBackend.load(any({ model: demo })), 'modelDir', /the path comes first/);
    await refuses(() => CpuBackend.load(demo, any('fast')), 'options', /expected an object/);
    await refuses(() => CpuBackend.loadGguf(any(undefined)), 'file', /CpuBackend\.loadGguf/);
    await refuses(() => OpenVinoBackend.load(any(undefined)), 'modelDir', /OpenVinoBackend\.load/);
    await refuses(() => OpenVinoBackend.load('x', any(3)), 'options', /expected an object/);
    await refuses(() => createParserChain(any(undefined)), 'parsers', /expected \{ reasoning\?, tool\? \} parser objects/);
    await refuses(() => createParserChain(any('qwen3')), 'parsers', /createReasoningParser \/ createToolParser/);
    await refuses(() => createParserChain(any({ tool: 'hermes' })), 'parsers.tool', /got the string "hermes"/);
  });

  it('take the documented shapes', async () => {
    expect(new ChatTemplate('{{ messages[0].content }}').names).toEqual(['default']);
    expect(new ChatTemplate(new Map([['default', 'a'], ['tool_use', 'b']])).names).toEqual(['default', 'tool_use']);
    const text = await loadText(demo);
    expect(text.tokenizer.vocabSize).toBeGreaterThan(0);
    const chain = createParserChain({ reasoning: createReasoningParser('qwen3'), tool: createToolParser('qwen3coder') });
    expect(chain.parse('<think>a</think>b').content).toBe('b');
    expect(createParserChain({}).parse('x').content).toBe('x');
  });
});
