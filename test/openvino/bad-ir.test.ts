/**
 * Bad IR and bad device names give typed errors, and a pipeline already running
 * on OpenVINO keeps producing its exact output while the bad loads fail.
 */
import { copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { OpenVinoBackend } from '../../src/backends/openvino/openvino-backend.js';
import { InvalidOptionError, ModelLoadError, Pipeline, WeftError } from '../../src/index.js';
import { DEMO_IR, describeOpenVino, EXACT, TINY_IR } from './helpers.js';

/** An IR with no attention at all: Parameter -> Relu -> Result (IR v11, written by hand). */
const NOT_AN_LLM = `<?xml version="1.0"?>
<net name="relu" version="11">
  <layers>
    <layer id="0" name="input_ids" type="Parameter" version="opset1">
      <data shape="?" element_type="f32"/>
      <output><port id="0" precision="FP32" names="input_ids"><dim>-1</dim></port></output>
    </layer>
    <layer id="1" name="relu" type="ReLU" version="opset1">
      <input><port id="0" precision="FP32"><dim>-1</dim></port></input>
      <output><port id="1" precision="FP32" names="logits"><dim>-1</dim></port></output>
    </layer>
    <layer id="2" name="out" type="Result" version="opset1">
      <input><port id="0" precision="FP32"><dim>-1</dim></port></input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
    <edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>
  </edges>
</net>
`;

describeOpenVino('bad OpenVINO IR -> typed errors, other pipelines unaffected', () => {
  let work: string;
  let healthy: Pipeline;
  let expected: number[];
  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'weft-bad-ir-'));
    healthy = await Pipeline.create({ model: DEMO_IR('f32'), device: 'openvino:CPU', threads: 1, openvino: { inferencePrecision: 'f32' } });
    expected = (await healthy.generate('Once upon a time', { maxTokens: 40, temperature: 0, ignoreEos: true })).tokenIds;
  });
  afterAll(async () => {
    await healthy?.close();
    rmSync(work, { recursive: true, force: true });
  });

  /** A copy of the tiny f32 IR folder, changed by `damage`. */
  function damaged(name: string, damage: (dir: string) => void): string {
    const dir = join(work, name);
    cpSync(TINY_IR('f32'), dir, { recursive: true });
    damage(dir);
    return dir;
  }

  const cases: Array<[string, (dir: string) => void, RegExp]> = [
    ['truncated .bin', (d) => truncateSync(join(d, 'openvino_model.bin'), Math.floor(statSync(join(d, 'openvino_model.bin')).size / 2)), /openvino_model\.xml/],
    ['xml that does not parse', (d) => writeFileSync(join(d, 'openvino_model.xml'), readFileSync(join(d, 'openvino_model.xml'), 'utf8').slice(0, 5000)), /openvino_model\.xml/],
    ['a model without attention', (d) => writeFileSync(join(d, 'openvino_model.xml'), NOT_AN_LLM), /neither PagedAttention nor ScaledDotProductAttention/],
    ['no .bin at all', (d) => rmSync(join(d, 'openvino_model.bin')), /openvino_model\.bin is missing/],
    ['IR of another model than config.json', (d) => copyFileSync(join(DEMO_IR('f32'), 'config.json'), join(d, 'config.json')), /key_cache inputs but config.json says 5 layers|vocab_size/],
  ];

  it.each(cases)('%s: ModelLoadError, and the running pipeline is untouched', async (name, damage, message) => {
    const dir = damaged(name.replace(/\W+/g, '-'), damage);
    const running = healthy.generate('Once upon a time', { maxTokens: 40, temperature: 0, ignoreEos: true });
    const error = await OpenVinoBackend.load(dir, EXACT).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ModelLoadError);
    expect((error as Error).message).toMatch(message);
    expect((await running).tokenIds).toEqual(expected);
  });

  it('unsupported device names: InvalidOptionError before anything loads', async () => {
    for (const device of ['openvino:NPU', 'openvino:', 'openvino', 'openvino:GPU']) {
      const error = await Pipeline.create({ model: DEMO_IR('f32'), device }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, device).toBeInstanceOf(InvalidOptionError);
      expect((error as WeftError).code).toBe('INVALID_OPTION');
    }
    await expect(Pipeline.create({ model: DEMO_IR('f32'), device: 'tpu' })).rejects.toBeInstanceOf(InvalidOptionError);
  });

  it('a fixed block size the plugin did not choose is refused with a typed error', async () => {
    await expect(Pipeline.create({ model: DEMO_IR('f32'), device: 'openvino:CPU', kvCache: { blockSize: 7 } })).rejects.toThrow(
      /kvCache.blockSize: this backend's cache uses \d+-token blocks/,
    );
  });
});
