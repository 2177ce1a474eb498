/**
 * Reading and decoding request bodies: the size limit (413), the content type (415), the syntax (400), the
 * apiVersion and kind (400 when they name another type), and the schema (400 listing every wrong field), then the
 * kind's defaults. What comes out is a well-typed object of the endpoint's kind.
 */
import { type IncomingMessage } from 'node:http';

import { type ApiObject, badRequest, decodeInto, isCodecError, type Kind, requestEntityTooLarge } from '@platform/api';
import * as yaml from 'js-yaml';

import { noteRequestBody, noteRequestObject } from '../../audit/context';
import { normalizeGroupReferences, platformApiVersion } from '../group-alias';
import { type Format, negotiateInput } from '../negotiation/negotiate';
import { type Serializers } from '../responses/writers';

/** Kubernetes' limit on request bodies: 3 MiB. */
export const DEFAULT_MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/** Reads the whole body, failing with 413 as soon as it exceeds `limit` bytes. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    throw requestEntityTooLarge(`limit is ${limit}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > limit) throw requestEntityTooLarge(`limit is ${limit}`);
    chunks.push(b);
  }
  const body = Buffer.concat(chunks, size);
  noteRequestBody(req, body); // audit (levels Request and up)
  return body;
}

/**
 * The deepest nesting of arrays and objects a body may have. Kubernetes objects nest a few dozen levels at most; the
 * YAML loader stops at 100 too. Deeper values would overflow the stack of the recursive steps after decoding (schema,
 * patches, managed fields, audit): they are refused with 400 before any of them runs.
 */
export const MAX_NESTING_DEPTH = 100;

/** 400 when `value` nests arrays or objects deeper than `MAX_NESTING_DEPTH` (an iterative walk: no recursion). */
export function checkNesting(value: unknown, what: string): void {
  if (value === null || typeof value !== 'object') return;
  const stack: unknown[] = [value];
  const depths: number[] = [1];
  while (stack.length) {
    const v = stack.pop() as object;
    const d = depths.pop() as number;
    if (d > MAX_NESTING_DEPTH) {
      throw badRequest(`${what}: the value is nested more than ${MAX_NESTING_DEPTH} levels deep`);
    }
    const children = Array.isArray(v) ? (v as unknown[]) : Object.values(v);
    for (const c of children) {
      if (c !== null && typeof c === 'object' && !ArrayBuffer.isView(c)) {
        stack.push(c);
        depths.push(d + 1);
      }
    }
  }
}

/** Whether `value` has at most `limit` nodes (counting stops as soon as it is exceeded). */
function hasAtMostNodes(value: unknown, limit: number): boolean {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (++count > limit) return false;
    if (Array.isArray(v)) stack.push(...(v as unknown[]));
    else if (v !== null && typeof v === 'object') stack.push(...Object.values(v));
  }
  return true;
}

/**
 * Parses a YAML (or JSON) body. YAML aliases can expand a small body into a huge value (a "billion laughs"
 * document); a plain document has fewer nodes than bytes, so one that expands beyond that is refused (400).
 */
export function loadYaml(body: Buffer, what: string): unknown {
  let value: unknown;
  try {
    value = yaml.load(body.toString('utf8'), { json: true });
  } catch (err) {
    throw badRequest(`${what}: ${(err as Error).message.split('\n')[0] ?? ''}`);
  }
  if (!hasAtMostNodes(value, 2 * body.length + 16)) {
    throw badRequest(`${what}: the document expands to too many values (excessive aliasing)`);
  }
  checkNesting(value, what);
  return value;
}

/** Parses a JSON body (a patch, DeleteOptions, an object) into a plain value no deeper than `MAX_NESTING_DEPTH`. */
export function parseJson(body: Buffer, what = 'the body of the request is not valid JSON'): unknown {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw badRequest(`${what}: ${(err as Error).message}`);
  }
  checkNesting(value, what);
  return value;
}

/** Parses a body in a format into a plain value (no schema yet), no deeper than `MAX_NESTING_DEPTH`. */
export function parseBody(body: Buffer, format: Format, s: Serializers): unknown {
  if (body.length === 0) throw badRequest('the request body is empty');
  switch (format) {
    case 'json':
      return parseJson(body);
    case 'yaml':
      return loadYaml(body, 'the body of the request is not valid YAML');
    case 'protobuf': {
      const what = 'the body of the request is not valid Protobuf';
      let value: unknown;
      try {
        value = s.protobuf.decode(body);
      } catch (err) {
        if (isCodecError(err)) throw badRequest(`${what}: ${err.message}`);
        // A message nested deeper than the decoder's stack allows.
        if (err instanceof RangeError) throw badRequest(`${what}: ${err.message}`);
        throw err;
      }
      checkNesting(value, what);
      return value;
    }
  }
}

/**
 * Checks a parsed value as an object of `kind`: apiVersion and kind must name it when present (they are filled in
 * when absent), the schema must hold, then defaults are applied.
 */
export function decodeObject(value: unknown, kind: Kind): ApiObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest(`the body of the request must be a ${kind.kind} object`);
  }
  // A patch can build a deeper object than its body is.
  checkNesting(value, `${kind.kind} in version "${kind.version}" cannot be handled as a ${kind.kind}`);
  const obj = value as ApiObject;
  // Kubernetes' spelling of the group (`rbac.authorization.k8s.io/v1`) names the same version.
  if (
    obj.apiVersion !== undefined &&
    obj.apiVersion !== kind.apiVersion &&
    (typeof obj.apiVersion !== 'string' || platformApiVersion(obj.apiVersion) !== kind.apiVersion)
  ) {
    throw badRequest(
      `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${kind.apiVersion})`,
    );
  }
  if (obj.kind !== undefined && obj.kind !== kind.kind) {
    throw badRequest(`the kind in the data (${String(obj.kind)}) does not match the expected kind (${kind.kind})`);
  }
  const r = decodeInto<ApiObject>(kind.schema.$id as string, obj);
  if (!r.ok) {
    throw badRequest(
      `${kind.kind} in version "${kind.version}" cannot be handled as a ${kind.kind}: ${r.errors.join('; ')}`,
    );
  }
  r.value.apiVersion = kind.apiVersion;
  r.value.kind = kind.kind;
  normalizeGroupReferences(r.value as Record<string, unknown>);
  kind.spec.defaults?.(r.value as never);
  return r.value;
}

/** Reads, parses and decodes the body of a create or update. */
export async function readObject(req: IncomingMessage, kind: Kind, s: Serializers, limit: number): Promise<ApiObject> {
  const format = negotiateInput(req.headers['content-type']);
  const obj = decodeObject(parseBody(await readBody(req, limit), format, s), kind);
  noteRequestObject(req, obj); // audit: the object as decoded, before admission
  return obj;
}
