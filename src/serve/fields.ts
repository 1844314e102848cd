/**
 * Typed reads of a JSON request body's fields. Each wrong type is a 400 that
 * names the field as the client spelt it. `null` counts as absent, as the
 * OpenAI API treats it.
 */

import { badRequest } from './errors.js';

export type Json = Record<string, unknown>;

export function isJsonObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function requireObject(value: unknown, what: string): Json {
  if (!isJsonObject(value)) throw badRequest(`${what} must be a JSON object`, what === 'the request body' ? null : what);
  return value;
}

export function optionalNumber(body: Json, field: string): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw badRequest(`${field} must be a number`, field);
  return value;
}

export function optionalInteger(body: Json, field: string): number | undefined {
  const value = optionalNumber(body, field);
  if (value !== undefined && !Number.isInteger(value)) throw badRequest(`${field} must be an integer`, field);
  return value;
}

export function optionalBoolean(body: Json, field: string): boolean | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw badRequest(`${field} must be a boolean`, field);
  return value;
}

export function optionalString(body: Json, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw badRequest(`${field} must be a string`, field);
  return value;
}

export function optionalObject(body: Json, field: string): Json | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value)) throw badRequest(`${field} must be an object`, field);
  return value;
}
