import { readFileSync } from 'node:fs';
import type { ToolDefinition } from '../text/types.js';
import { UsageError } from './usage-error.js';

/**
 * Reads `--tools <file.json>`: a JSON array of tool definitions
 * (`{ "type": "function", "function": { "name", "description", "parameters" } }`).
 * Every problem is a UsageError that names the file, so a typo exits 2 before the model loads.
 */
export function readToolsFile(file: string): ToolDefinition[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new UsageError(`--tools ${file}: ${reason}`, 'chat');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--tools ${file}: not valid JSON (${(error as Error).message})`, 'chat');
  }
  if (!Array.isArray(parsed)) throw new UsageError(`--tools ${file}: expected a JSON array of tool definitions`, 'chat');
  parsed.forEach((tool: unknown, i) => {
    const problem = toolProblem(tool);
    if (problem !== undefined) throw new UsageError(`--tools ${file}: tool ${i} ${problem}`, 'chat');
  });
  return parsed as ToolDefinition[];
}

function toolProblem(tool: unknown): string | undefined {
  if (!isObject(tool)) return 'is not an object';
  if (tool.type !== 'function') return 'needs "type": "function"';
  const fn = tool.function;
  if (!isObject(fn) || typeof fn.name !== 'string' || fn.name === '') return 'needs "function": { "name": ... }';
  if (fn.parameters !== undefined && !isObject(fn.parameters)) return `(${fn.name}): "parameters" must be a JSON schema object`;
  return undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
