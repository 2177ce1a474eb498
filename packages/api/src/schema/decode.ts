/**
 * Structural validation and defaulting of untrusted input against a named schema, with ajv (each schema compiled
 * once, on first use).
 *
 * Decoding follows Kubernetes 1.21's JSON decoding: unknown fields are dropped, `null` means "not set", a value of
 * the wrong type is an error. Errors name the field path (`spec.containers[0].ports[1].containerPort: must be integer`).
 * Semantic validation (names, labels, cross-field rules) is not done here: that is each kind's strategy.
 */
import Ajv, { type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv';

import { ANNOTATION_KEYWORDS, namedSchemas } from './schema';

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

let ajv: Ajv | undefined;
const added = new Set<string>();
const compiled = new Map<string, ValidateFunction>();

function instance(): Ajv {
  if (!ajv) {
    ajv = new Ajv({ strict: true, allowUnionTypes: true, removeAdditional: true, useDefaults: true, allErrors: true });
    for (const keyword of ANNOTATION_KEYWORDS) {
      if (keyword === 'wire') continue;
      ajv.addKeyword({ keyword });
    }
    // A quantity given as a JSON number is kept as its string, which is its canonical JSON form.
    ajv.addKeyword({
      keyword: 'wire',
      modifying: true,
      schemaType: 'string',
      validate: (
        wire: string,
        data: unknown,
        _schema: unknown,
        ctx?: { parentData: Record<string, unknown>; parentDataProperty: string | number },
      ) => {
        if (wire === 'quantity' && typeof data === 'number' && ctx)
          ctx.parentData[ctx.parentDataProperty] = String(data);
        return true;
      },
    });
    ajv.addFormat('date-time', {
      type: 'string',
      validate: (s: string) => RFC3339.test(s) && !Number.isNaN(Date.parse(s)),
    });
    ajv.addFormat('byte', { type: 'string', validate: (s: string) => BASE64.test(s) });
    ajv.addFormat('int32', {
      type: 'number',
      validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
    });
    ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
    ajv.addFormat('double', { type: 'number', validate: () => true });
  }
  for (const [id, schema] of namedSchemas()) {
    if (added.has(id)) continue;
    ajv.addSchema(schema as AnySchema, id);
    added.add(id);
  }
  return ajv;
}

/** Removes `null` object properties throughout a value decoded from JSON (Kubernetes reads them as unset). */
export function stripNulls(value: unknown): void {
  if (Array.isArray(value)) {
    for (const v of value) stripNulls(v);
  } else if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const v = o[k];
      if (v === null) delete o[k];
      else if (typeof v === 'object') stripNulls(v);
    }
  }
}

function path(e: ErrorObject): string {
  const parts = e.instancePath.split('/').slice(1);
  let out = '';
  for (const raw of parts) {
    const p = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(p) ? `[${p}]` : out ? `.${p}` : p;
  }
  return out;
}

function describe(e: ErrorObject): string {
  const where = path(e);
  let what = e.message ?? 'is invalid';
  if (e.keyword === 'enum')
    what = `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  if (e.keyword === 'format') what = `must be ${formatName((e.params as { format: string }).format)}`;
  return where ? `${where}: ${what}` : what;
}

function formatName(format: string): string {
  switch (format) {
    case 'date-time':
      return 'an RFC 3339 time (e.g. "2021-01-01T00:00:00Z")';
    case 'byte':
      return 'base64-encoded data';
    case 'int32':
      return 'a 32-bit integer';
    case 'int64':
      return 'a 64-bit integer';
    default:
      return `in format ${format}`;
  }
}

/** The result of {@link decodeInto}: the object, or the structural problems found. */
export type DecodeResult<T> = { ok: true; value: T } | { ok: false; errors: string[] };

/**
 * Validates `input` (a value from `JSON.parse` or a YAML parser, owned by the caller: it is changed in place)
 * against the named schema `id`: drops nulls and unknown fields, fills schema defaults, and reports every
 * structural problem with its field path.
 */
export function decodeInto<T>(id: string, input: unknown): DecodeResult<T> {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return {
      ok: false,
      errors: [
        `expected a JSON object, got ${input === null ? 'null' : Array.isArray(input) ? 'an array' : typeof input}`,
      ],
    };
  }
  stripNulls(input);
  let validate = compiled.get(id);
  if (!validate) {
    const a = instance();
    validate = a.getSchema(id);
    if (!validate) throw new Error(`unknown schema ${id}`);
    compiled.set(id, validate);
  }
  if (validate(input)) return { ok: true, value: input as T };
  const seen = new Set<string>();
  const errors: string[] = [];
  for (const e of validate.errors ?? []) {
    const text = describe(e);
    if (!seen.has(text)) {
      seen.add(text);
      errors.push(text);
    }
  }
  return { ok: false, errors };
}
