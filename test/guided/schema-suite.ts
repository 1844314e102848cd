/** The JSON-schema suite the grammar tests and bench/guided-engines walk: strings bounded, so a uniform random walk ends well within the token budget. */
export const SUITE: Record<string, unknown> = {
  calculator: {
    type: 'object',
    properties: { operation: { type: 'string', enum: ['add', 'subtract', 'multiply', 'divide'] }, a: { type: 'number' }, b: { type: 'number' } },
    required: ['operation', 'a', 'b'],
  },
  optional: { type: 'object', properties: { x: { type: 'integer' }, y: { type: 'boolean' }, z: { type: 'null' } }, required: ['y'], additionalProperties: false },
  strings: { type: 'object', properties: { name: { type: 'string', maxLength: 6 }, tag: { type: 'string', minLength: 2, maxLength: 3 } }, required: ['name', 'tag'] },
  array: { type: 'array', items: { type: 'integer' }, minItems: 1, maxItems: 4 },
  nested: {
    type: 'object',
    properties: { points: { type: 'array', maxItems: 3, items: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'] } } },
    required: ['points'],
  },
  union: { anyOf: [{ type: 'integer' }, { type: 'string', maxLength: 4 }, { type: 'null' }] },
  typeList: { type: ['boolean', 'integer'] },
  const: { type: 'object', properties: { kind: { const: 'point' }, n: { enum: [1, 12, 123, 'x'] } }, required: ['kind', 'n'] },
  refs: {
    $defs: { unit: { type: 'string', enum: ['m', 'km'] } },
    type: 'object',
    properties: { value: { type: 'number' }, unit: { $ref: '#/$defs/unit' } },
    required: ['value', 'unit'],
  },
  escapes: { type: 'object', properties: { 'we"ird\\key': { type: 'boolean' } }, required: ['we"ird\\key'] },
};
