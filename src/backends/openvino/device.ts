/**
 * Device names: weft's `device` option -> an OpenVINO device.
 *
 * 'openvino:CPU', 'openvino:GPU', 'openvino:GPU.1', 'openvino:AUTO' (case of the
 * prefix ignored). AUTO is resolved by weft, not by OpenVINO's AUTO plugin (a
 * PagedAttention model's cache is bound to one device): the first GPU OpenVINO
 * reports, else CPU.
 */
import { InvalidOptionError } from '../../errors.js';

const PATTERN = /^openvino:(CPU|GPU(\.\d+)?|AUTO)$/i;

/** True when `device` asks for the OpenVINO backend (even a malformed OpenVINO name). */
export function isOpenVinoDevice(device: string | undefined): boolean {
  return typeof device === 'string' && device.toLowerCase().startsWith('openvino');
}

/** "CPU", "GPU", "GPU.1" or "AUTO" from weft's name for it; InvalidOptionError for anything else. */
export function parseOpenVinoDevice(device: string): string {
  const match = PATTERN.exec(device);
  if (!match) {
    throw new InvalidOptionError('device', `"${device}" is not an OpenVINO device; use "openvino:CPU", "openvino:GPU" (or "openvino:GPU.N") or "openvino:AUTO"`);
  }
  return match[1]!.toUpperCase();
}

/** The OpenVINO device named by `device`, or InvalidOptionError. `available`: what OpenVINO reports. */
export function resolveOpenVinoDevice(device: string, available: readonly string[]): string {
  const wanted = parseOpenVinoDevice(device);
  if (wanted === 'AUTO') return available.find((d) => d.startsWith('GPU')) ?? 'CPU';
  if (!available.includes(wanted)) {
    throw new InvalidOptionError('device', `OpenVINO reports no ${wanted} device here (available: ${available.join(', ') || 'none'})`);
  }
  return wanted;
}
