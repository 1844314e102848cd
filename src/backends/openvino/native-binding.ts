/**
 * Loads weft's OpenVINO addon (native/openvino/build/Release/weft_openvino.node),
 * built by scripts/build-openvino.cjs only when OpenVINO is found. Missing or
 * broken, it raises OpenVinoUnavailableError saying how to get it.
 * WEFT_OPENVINO_NATIVE_PATH overrides the location.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OpenVinoUnavailableError } from '../../errors.js';
import { findPackageRoot } from '../../package-files.js';
import type { PortInfo, StepInput } from './step-inputs.js';

/** What `load()` resolves with. */
export interface NativeModelInfo {
  readonly inputs: readonly PortInfo[];
  readonly outputs: readonly PortInfo[];
  /** True when the IR was a stateful SDPA model converted with SDPAToPagedAttention. */
  readonly converted: boolean;
  readonly device: string;
  /** Bytes one block takes over all key_cache.N / value_cache.N tensors. */
  readonly bytesPerBlock: number;
  /** Bytes one linear-attention state block takes over all conv_state_table.N / gated_delta_state_table.N tensors (0: none). */
  readonly stateBytesPerBlock: number;
}

/** Milliseconds of one step: marshal and result on the main thread, the rest on the worker (native/openvino/src/runner.h). */
export interface NativeStepTimings {
  /** Copying the step's JS arrays into native vectors (inside execute(), before it returns its promise). */
  readonly marshalMs: number;
  /** Converting them to the model's element types and binding them as tensors. */
  readonly inputsMs: number;
  readonly inferMs: number;
  /** Reading the logits output back into float32, into the buffer lent to JavaScript. */
  readonly logitsMs: number;
  /** The greedy pick of the rows argmaxRows marks (worker thread). */
  readonly pickMs: number;
  /** Lending the logits to JavaScript as a Float32Array (main thread). */
  readonly resultMs: number;
}

export interface NativeOvModel {
  load(xmlPath: string, device: string, properties: Readonly<Record<string, string>>): Promise<NativeModelInfo>;
  /** stateBlocks: blocks of every linear-attention state table (hybrid models; block 0 stays zero). */
  allocateCache(numBlocks: number, stateBlocks?: number): Promise<void>;
  /**
   * One step. `logits` lie in memory the model lends (native/common/logits_transfer.h) until
   * releaseLogits or garbage collection; `argmax`: the greedy pick of each row `argmaxRows`
   * marks (native/openvino/src/greedy_pick.h), -1 for the others; absent without argmaxRows.
   */
  execute(inputs: readonly StepInput[], blockCopies?: Int32Array, argmaxRows?: Uint8Array): Promise<{ logits: Float32Array; argmax?: Int32Array }>;
  /** Detaches logits this model lent so the next step reuses their memory; false for any other array. */
  releaseLogits(logits: Float32Array): boolean;
  /** The logits buffers allocated so far, and those lent to JavaScript now. */
  readonly logitsBuffers: { readonly allocated: number; readonly lent: number };
  /** Where the last finished step's time went (bench/openvino/step-profile.bench.ts). */
  lastStepTimings(): NativeStepTimings;
  dispose(): void;
}

/** One property of a device as the plugin reports it: a value, or why it could not be read. */
export interface NativeDeviceProperty {
  readonly name: string;
  readonly value?: string;
  readonly error?: string;
}

/** What describeDevice() returns (native/openvino/src/device_report.h). */
export interface NativeDeviceReport {
  readonly plugins: ReadonlyArray<{ readonly name: string; readonly buildNumber: string; readonly description: string }>;
  /** The properties that matter to weft, of those the device lists, in a fixed order. */
  readonly properties: readonly NativeDeviceProperty[];
}

export interface NativeOpenVinoBinding {
  readonly abiVersion: number;
  /** OpenVINO's build number, e.g. "2026.4.1-22982-...". */
  readonly openvinoVersion: string;
  availableDevices(): string[];
  /** The plugin's versions and selected properties of one device; throws when OpenVINO knows no such device. */
  describeDevice(device: string): NativeDeviceReport;
  readonly OvModel: new () => NativeOvModel;
  /** Test hooks; not used by weft itself. */
  readonly testing: {
    /** The worker's greedy pick (native/openvino/src/greedy_pick.h) on one row; RangeError for an empty one. */
    greedyPick(values: Float32Array): number;
  };
}

// Kept equal to kAbiVersion in native/openvino/src/binding.cc (3: describeDevice, testing.greedyPick, execute's { logits, argmax }, releaseLogits, lastStepTimings).
const ABI_VERSION = 3;

/** How a user gets the OpenVINO backend (the text of every "unavailable" error). */
export const HOW_TO_GET_OPENVINO =
  'install the OpenVINO runtime with `pip install openvino==2026.4.1` (or unpack an OpenVINO 2026.4 archive and set ' +
  'OpenVINO_DIR to its runtime/cmake folder), then run `npm run build:openvino` in the weft package folder ' +
  '(needs cmake >= 3.15 and a C++17 compiler); see docs/openvino.md';

let cached: NativeOpenVinoBinding | undefined;

export function openVinoAddonPath(): string {
  const override = process.env.WEFT_OPENVINO_NATIVE_PATH;
  if (override) return override;
  const here = dirname(fileURLToPath(import.meta.url));
  const root = findPackageRoot(here);
  if (!root) throw new OpenVinoUnavailableError(`cannot find the weft package folder above ${here}; ${HOW_TO_GET_OPENVINO}`);
  return join(root, 'native', 'openvino', 'build', 'Release', 'weft_openvino.node');
}

/** The loaded addon (cached); throws OpenVinoUnavailableError when it is missing or broken. */
export function loadOpenVinoBinding(): NativeOpenVinoBinding {
  if (cached) return cached;
  const file = openVinoAddonPath();
  if (!existsSync(file)) {
    throw new OpenVinoUnavailableError(`the OpenVINO backend is not built (${file} is missing): ${HOW_TO_GET_OPENVINO}`);
  }
  let binding: Partial<NativeOpenVinoBinding>;
  try {
    binding = createRequire(import.meta.url)(file) as Partial<NativeOpenVinoBinding>;
  } catch (cause) {
    throw new OpenVinoUnavailableError(
      `the OpenVINO backend at ${file} failed to load (${(cause as Error).message}); ${HOW_TO_GET_OPENVINO}`,
      { cause },
    );
  }
  if (binding.abiVersion !== ABI_VERSION || typeof binding.OvModel !== 'function') {
    throw new OpenVinoUnavailableError(
      `the OpenVINO backend at ${file} is out of date (abiVersion ${String(binding.abiVersion)}, expected ${ABI_VERSION}); rebuild with npm run build:openvino`,
    );
  }
  cached = binding as NativeOpenVinoBinding;
  return cached;
}
