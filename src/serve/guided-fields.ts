/**
 * `response_format` and `tool_choice` (OpenAI shapes) -> weft's guided
 * generation options (`responseFormat`, `toolChoice`, docs/guided.md).
 * Shapes are checked here; schemas and parser support are checked by the
 * pipeline, whose InvalidOptionError errors.ts maps back to these fields.
 */

import type { ResponseFormat, ToolChoice } from '../guided/guide.js';
import { badRequest } from './errors.js';
import { isJsonObject, type Json } from './fields.js';

/** `{type:'text'}` (or absent) is no constraint; `json_object` any object; `json_schema` its `schema`. */
export function parseResponseFormat(body: Json): ResponseFormat | undefined {
  const value = body.response_format;
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value)) throw badRequest('response_format must be an object', 'response_format');
  switch (value.type) {
    case 'text':
      return undefined;
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      const spec = value.json_schema;
      if (!isJsonObject(spec)) throw badRequest('response_format.json_schema must be {"name":...,"schema":{...}}', 'response_format.json_schema');
      if (spec.name !== undefined && spec.name !== null && typeof spec.name !== 'string') {
        throw badRequest('response_format.json_schema.name must be a string', 'response_format.json_schema.name');
      }
      if (spec.strict !== undefined && spec.strict !== null && typeof spec.strict !== 'boolean') {
        throw badRequest('response_format.json_schema.strict must be a boolean', 'response_format.json_schema.strict');
      }
      // OpenAI allows the schema to be left out (any JSON); weft's nearest is "any object".
      const schema = spec.schema;
      if (schema === undefined || schema === null) return { type: 'json_object' };
      if (!isJsonObject(schema) && typeof schema !== 'boolean') {
        throw badRequest('response_format.json_schema.schema must be a JSON schema object', 'response_format.json_schema.schema');
      }
      // `strict` changes nothing: the output always validates (the grammar is a subset of the schema).
      return { type: 'json_schema', schema, ...(typeof spec.name === 'string' && { name: spec.name }) };
    }
    default:
      throw badRequest('response_format.type must be "text", "json_object" or "json_schema"', 'response_format.type');
  }
}

/** `'auto'` (default), `'none'`, `'required'`, or `{type:'function', function:{name}}`. */
export function parseToolChoice(value: unknown): ToolChoice {
  if (value === undefined || value === null || value === 'auto') return 'auto';
  if (value === 'none' || value === 'required') return value;
  if (isJsonObject(value) && value.type === 'function' && isJsonObject(value.function) && typeof value.function.name === 'string') {
    return { name: value.function.name };
  }
  throw badRequest('tool_choice must be "auto", "none", "required" or {"type":"function","function":{"name":...}}', 'tool_choice');
}
