import { expect } from 'vitest';
import { collectEvents, type ParserEvent, type ParserStream } from '../../src/parsers/index.js';
import type { ToolCall, ToolDefinition } from '../../src/text/types.js';

/** Splits text at the given cut points (sorted, deduplicated, inside the text). */
export function splitAt(text: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((c) => Math.max(0, Math.min(text.length, c))))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let last = 0;
  for (const p of points) {
    if (p > last) pieces.push(text.slice(last, p));
    last = p;
  }
  if (last < text.length || pieces.length === 0) pieces.push(text.slice(last));
  return pieces;
}

export const chars = (text: string): string[] => [...text.split('')];

/** Streams pieces through a fresh stream and returns all events in order. */
export function runStream(stream: ParserStream<ParserEvent>, pieces: readonly string[]): ParserEvent[] {
  const events: ParserEvent[] = [];
  for (const piece of pieces) events.push(...stream.push(piece));
  events.push(...stream.end());
  return events;
}

/**
 * Checks the event-sequence contract: each call starts once, its deltas follow its start and precede
 * its end, and the deltas concatenate to valid JSON equal to the final arguments. Returns the calls.
 */
export function checkEventContract(events: readonly ParserEvent[]): ToolCall[] {
  const state = new Map<number, { text: string; ended: boolean }>();
  for (const event of events) {
    if (event.type === 'tool-call-start') {
      expect(state.has(event.index), `call ${event.index} started twice`).toBe(false);
      expect(event.name.length).toBeGreaterThan(0);
      state.set(event.index, { text: '', ended: false });
    } else if (event.type === 'tool-call-delta') {
      const call = state.get(event.index);
      expect(call && !call.ended, `delta for call ${event.index} outside start..end`).toBe(true);
      call!.text += event.argumentsDelta;
    } else if (event.type === 'tool-call-end') {
      const call = state.get(event.index);
      expect(call && !call.ended, `end for call ${event.index} without start`).toBe(true);
      call!.ended = true;
      expect(JSON.parse(call!.text)).toStrictEqual(event.arguments);
    } else {
      expect(event.text.length).toBeGreaterThan(0);
    }
  }
  for (const [index, call] of state) expect(call.ended, `call ${index} never ended`).toBe(true);
  return collectEvents(events).toolCalls;
}

export const TOOLS: ToolDefinition[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string' },
          days: { type: 'integer' },
          unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        },
        required: ['city'],
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'write_file',
      parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } },
    },
  },
  {
    type: 'function',
    function: {
      name: 'search',
      parameters: {
        type: 'object',
        properties: {
          query: { type: 'string' },
          limit: { type: 'integer' },
          ratio: { type: 'number' },
          exact: { type: 'boolean' },
          filters: { type: 'object' },
          tags: { type: 'array', items: { type: 'string' } },
          note: { type: ['string', 'null'] },
          zip: { type: 'string' },
          mode: { enum: ['fast', 1, 2] },
        },
      },
    },
  },
  { type: 'function', function: { name: 'get_time' } },
  {
    type: 'function',
    function: {
      // Every JSON-schema type qwen3coder converts values to.
      name: 'convert',
      parameters: {
        type: 'object',
        properties: {
          s: { type: 'string' },
          i: { type: 'integer' },
          n: { type: 'number' },
          b: { type: 'boolean' },
          z: { type: 'null' },
          o: { type: 'object', properties: { inner: { type: 'array', items: { type: 'object' } } } },
          a: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } } } },
          maybeInt: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
          strOrInt: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
          intOrStr: { type: ['integer', 'string'] },
          level: { type: 'string', enum: ['low', 'high'] },
          choice: { oneOf: [{ enum: ['red', 'green'] }, { type: 'integer' }] },
          custom: { type: 'custom_thing' },
          f: { type: 'float' },
          flag: { type: 'bool' },
        },
      },
    },
  },
];
