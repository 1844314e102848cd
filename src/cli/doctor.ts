/**
 * `weft doctor`: one report an Arc (or any) user can paste into an issue:
 * versions, CPU kernels, whether the OpenVINO addon loaded and why not, and
 * each OpenVINO device's name, plugin, precisions and the paged cache layout
 * weft would use there. `--json` prints the same report as one JSON object.
 *
 * Exit code 0 whenever the report was written, even when OpenVINO is absent:
 * an absent backend is a finding, not a failure of the command.
 */
import type { CacheLayout, DoctorReport, OpenVinoReport, Unavailable } from './doctor-report.js';
import { gatherDoctorReport } from './doctor-report.js';
import type { CliIo } from './io.js';
import { EXIT_OK } from './usage-error.js';

export interface DoctorCommand {
  readonly json: boolean;
  readonly model?: string;
}

export async function runDoctor(command: DoctorCommand, io: CliIo): Promise<number> {
  const report = await gatherDoctorReport({ env: io.env, ...(command.model !== undefined && { model: command.model }) });
  io.stdout.write(command.json ? `${JSON.stringify(report, null, 2)}\n` : renderDoctorReport(report));
  return EXIT_OK;
}

const isUnavailable = (part: object): part is Unavailable => 'available' in part && part.available === false;

function unavailableLines(part: Unavailable, indent: string): string[] {
  return [`${indent}reason: ${part.reason}`, ...(part.fix !== undefined ? [`${indent}what to do: ${part.fix}`] : [])];
}

/** The report as text, one fact per line, in the order a reader looks for them. */
export function renderDoctorReport(report: DoctorReport): string {
  const lines = [
    `weft ${report.weft}, node ${report.node}, ${report.platform} (${report.os})`,
    `CPU: ${report.cpu.model}, ${report.cpu.logicalCores} logical cores`,
    '',
    'CPU backend:',
  ];
  const cpu = report.cpuBackend;
  if (isUnavailable(cpu)) {
    lines.push('  not available', ...unavailableLines(cpu, '  '));
  } else {
    lines.push(
      `  kernels: ${cpu.kernels}${cpu.forcedBy !== undefined ? ` (forced by ${cpu.forcedBy})` : ''}; kernel sets this CPU and build can run: ${cpu.supportedKernelSets.join(', ')}`,
      `  CPU features: ${cpu.cpuFeatures.join(' ') || 'none of those the kernels use'}`,
      `  AMX-INT8: ${cpu.amx.usable ? 'usable' : 'not usable'} (${cpu.amx.reason})`,
    );
  }
  lines.push('', 'OpenVINO backend:');
  const ov = report.openvino;
  if (isUnavailable(ov)) {
    lines.push('  the addon did not load', ...unavailableLines(ov, '  '));
  } else {
    lines.push(`  addon loaded: ${ov.addon}`, `  OpenVINO runtime ${ov.version}`);
    lines.push(...openVinoDeviceLines(ov));
  }
  return `${lines.join('\n')}\n`;
}

function openVinoDeviceLines(ov: OpenVinoReport): string[] {
  const lines: string[] = [];
  if (isUnavailable(ov.layoutModel)) {
    lines.push('  cache layouts: not derived', ...unavailableLines(ov.layoutModel, '    '));
  } else {
    lines.push(
      ov.layoutModel.yours
        ? `  cache layouts compiled from ${ov.layoutModel.path}`
        : `  cache layouts compiled from weft's demo IR (${ov.layoutModel.path}): a model of yours would use the same block size and element types, with its own heads and head size (weft doctor --model <IR dir> shows its own)`,
    );
  }
  if (isUnavailable(ov.devices)) return [...lines, '  devices: OpenVINO could not list them', ...unavailableLines(ov.devices, '    ')];
  if (ov.devices.length === 0) return [...lines, '  devices: none (OpenVINO lists no device on this machine)'];
  for (const device of ov.devices) {
    lines.push('', `  device ${device.name}`);
    for (const plugin of device.plugins) lines.push(`    plugin ${plugin.name} ${plugin.buildNumber} (${plugin.description})`);
    for (const property of device.properties) lines.push(`    ${property.name}: ${property.error !== undefined ? `unreadable (${property.error.split('\n')[0]})` : property.value === '' ? '(empty)' : property.value}`);
    for (const layout of device.cacheLayouts) {
      if (isUnavailable(layout)) {
        lines.push(`    kvCache.precision '${layout.kvPrecision}': no layout (${layout.reason.split('\n')[0]})`);
      } else {
        lines.push(`    kvCache.precision '${layout.kvPrecision}' would use: ${describeLayout(layout)}`);
      }
    }
  }
  return lines;
}

function describeLayout(layout: CacheLayout): string {
  const shape = (dims: readonly number[]) => `[${dims.map((d) => (d < 0 ? 'blocks' : String(d))).join(', ')}]`;
  const hints = Object.entries(layout.properties).filter(([key]) => key !== 'INFERENCE_NUM_THREADS').map(([key, value]) => `${key}=${value}`).join(' ');
  return `${layout.blockSize}-token blocks, ${layout.key.name} ${layout.key.type} ${shape(layout.key.shape)}, ${layout.value.name} ${layout.value.type} ${shape(layout.value.shape)}, ${layout.bytesPerBlock} bytes per block over all layers (${hints})`;
}
