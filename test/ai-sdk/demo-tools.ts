/**
 * The demo model's tools as AI SDK tools with real execute functions (the
 * results are shaped like src/cli/demo.ts's, which the model learnt from).
 * Every call is recorded, so tests can check what the model asked for.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonSchema, tool, type ToolSet } from 'ai';
import type { LanguageModelV3FunctionTool } from '@ai-sdk/provider';
import type { ToolDefinition } from '../../src/index.js';

export const demoModelDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'models', 'weft-demo');
export const toolDefinitions = JSON.parse(readFileSync(join(demoModelDir, 'tools.json'), 'utf8')) as ToolDefinition[];

const round2 = (x: number): number => Math.round(x * 100) / 100;

/** Deterministic fake weather, so a test knows the answer the model should repeat. */
export function weatherIn(city: string, unit = 'celsius'): { city: string; temperature: number; unit: string; condition: string } {
  const h = [...city].reduce((sum, ch, i) => sum + (i + 1) * ch.charCodeAt(0), 0);
  const celsius = (h % 35) - 5;
  const temperature = unit === 'fahrenheit' ? round2((celsius * 9) / 5 + 32) : celsius;
  return { city, temperature, unit, condition: ['sunny', 'cloudy', 'rainy', 'windy', 'snowy'][h % 5]! };
}

const implementations: Record<string, (input: Record<string, any>) => unknown> = {
  calculator: ({ operation, a, b }) => ({
    result: round2(({ add: a + b, subtract: a - b, multiply: a * b, divide: a / b } as Record<string, number>)[operation] ?? NaN),
  }),
  convert_units: ({ value, from_unit, to_unit }) => {
    if (from_unit === 'kilometers' && to_unit === 'miles') return { value: round2(value * 0.621371), unit: to_unit };
    if (from_unit === 'celsius' && to_unit === 'fahrenheit') return { value: round2((value * 9) / 5 + 32), unit: to_unit };
    return { error: `cannot convert ${from_unit} to ${to_unit}` };
  },
  get_weather: ({ city, unit }) => weatherIn(city, unit),
  create_event: ({ title, date }) => ({ status: 'created', title, date }),
  send_email: ({ to }) => ({ status: 'sent', to }),
};

export interface RecordedCall {
  readonly name: string;
  readonly input: Record<string, unknown>;
  readonly output: unknown;
}

/** All five tools, in tools.json's order (the order the model saw them in training). */
export function demoTools(calls: RecordedCall[] = []): ToolSet {
  return Object.fromEntries(
    toolDefinitions.map((definition) => {
      const name = definition.function.name;
      return [
        name,
        tool({
          description: definition.function.description ?? '',
          inputSchema: jsonSchema<Record<string, unknown>>(definition.function.parameters as object),
          execute: async (input: Record<string, unknown>) => {
            const output = implementations[name]!(input);
            calls.push({ name, input, output });
            return output;
          },
        }),
      ];
    }),
  );
}

/** The same tools as the spec's function tools, for calling a model's doGenerate / doStream directly. */
export function demoToolSpecs(): LanguageModelV3FunctionTool[] {
  return toolDefinitions.map((definition) => ({
    type: 'function',
    name: definition.function.name,
    ...(definition.function.description !== undefined && { description: definition.function.description }),
    inputSchema: definition.function.parameters as LanguageModelV3FunctionTool['inputSchema'],
  }));
}
