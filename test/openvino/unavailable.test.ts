/** Without the OpenVINO addon, asking for an OpenVINO device is a typed error that says how to get it. */
import { afterEach, beforeEach, expect, it, describe } from 'vitest';
import { OpenVinoUnavailableError, Pipeline } from '../../src/index.js';
import { DEMO_HF, DEMO_IR } from './helpers.js';

describe('OpenVINO backend not built', () => {
  const saved = process.env.WEFT_OPENVINO_NATIVE_PATH;
  beforeEach(() => {
    process.env.WEFT_OPENVINO_NATIVE_PATH = '/nonexistent/weft_openvino.node';
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.WEFT_OPENVINO_NATIVE_PATH;
    else process.env.WEFT_OPENVINO_NATIVE_PATH = saved;
  });

  it('openvino:CPU rejects with OpenVinoUnavailableError (NATIVE_BACKEND_UNAVAILABLE) naming pip install openvino and npm run build:openvino', async () => {
    const error = await Pipeline.create({ model: DEMO_IR('f32'), device: 'openvino:CPU' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OpenVinoUnavailableError);
    expect((error as OpenVinoUnavailableError).code).toBe('NATIVE_BACKEND_UNAVAILABLE');
    expect((error as Error).message).toContain('pip install openvino==2026.4.1');
    expect((error as Error).message).toContain('npm run build:openvino');
  });

  it('the CPU backend is unaffected, and device "auto" on a Hugging Face folder stays on it', async () => {
    const pipe = await Pipeline.create({ model: DEMO_HF, device: 'auto', threads: 1 });
    const result = await pipe.generate('Hello', { maxTokens: 4, temperature: 0, ignoreEos: true });
    expect(result.tokenIds).toHaveLength(4);
    await pipe.close();
  });
});
