/**
 * Writing responses: objects in the negotiated format, and every error as a `Status` (model: apiserver
 * `pkg/endpoints/handlers/responsewriters`). Nothing else in the handlers writes to the response.
 */
import { type ServerResponse } from 'node:http';

import { type ApiObject, errorToStatus, isStatusError, type ProtobufCodec, type Status } from '@platform/api';
import * as yaml from 'js-yaml';

import { noteResponseObject } from '../../audit/context';
import { respellObject, responseGroupAlias } from '../group-alias';
import { type Format } from '../negotiation/negotiate';
import { type BodyParts, encodeJson, encodeProtobuf, gather, jsonArrayParts, protobufListParts } from './encode-cache';

/** Serializers shared by every handler of a server. */
export interface Serializers {
  protobuf: ProtobufCodec;
}

/** Serializes an object in a format (`pretty` indents JSON as Kubernetes does with `?pretty=true`). */
export function serialize(obj: ApiObject | Status, format: Format, s: Serializers, pretty = false): Buffer {
  switch (format) {
    case 'json':
      return pretty ? Buffer.from(`${JSON.stringify(obj, null, 2)}\n`) : encodeJson(obj as ApiObject);
    case 'yaml':
      return Buffer.from(yaml.dump(obj, { noRefs: true, lineWidth: -1 }));
    case 'protobuf':
      return encodeProtobuf(s.protobuf, obj as ApiObject);
  }
}

const CONTENT_TYPE: Record<Format, string> = {
  json: 'application/json',
  yaml: 'application/yaml',
  protobuf: 'application/vnd.platform.protobuf',
};

/** Responses whose Protobuf is named as the request asked (Kubernetes' `application/vnd.kubernetes.protobuf`). */
const protobufNames = new WeakMap<ServerResponse, string>();

/** Notes the negotiated Content-Type of a response, when it is not the format's usual name. */
export function setResponseContentType(res: ServerResponse, output: { format: Format; contentType: string }): void {
  if (output.format === 'protobuf' && output.contentType !== CONTENT_TYPE.protobuf)
    protobufNames.set(res, output.contentType);
}

/** The Content-Type of `format` on `res` (Protobuf under the name the request used). */
export function responseContentType(res: ServerResponse, format: Format): string {
  return (format === 'protobuf' && protobufNames.get(res)) || CONTENT_TYPE[format];
}

/** Writes an object with a status code. */
export function writeObject(
  res: ServerResponse,
  code: number,
  obj: ApiObject | Status,
  format: Format,
  s: Serializers,
  pretty = false,
): void {
  // The request timed out or the client left: the answer has nowhere to go.
  if (res.headersSent || res.writableEnded) return;
  noteResponseObject(res, obj); // audit: the Status of failures, the object at level RequestResponse
  // A request that spelled its group the Kubernetes way is answered in that spelling.
  const alias = responseGroupAlias(res);
  const body = serialize(alias ? respellObject(obj, alias) : obj, format, s, pretty);
  res.statusCode = code;
  res.setHeader('Content-Type', responseContentType(res, format));
  res.setHeader('Content-Length', body.length);
  res.end(body);
}

/** A body smaller than this is written whole, with its Content-Length, as `writeObject` does. */
const STREAM_THRESHOLD = 256 * 1024;
/** The size of the writes of a streamed body (its parts are gathered up to this). */
const STREAM_CHUNK = 64 * 1024;
/** A streamed body lets other work run after this many bytes written without waiting for the client. */
const STREAM_YIELD_BYTES = 1024 * 1024;

/** Resolves once `res` can take more (it drained) or is gone. */
function writable(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Writes a body given as parts. A small one goes out whole with its Content-Length; a large one is streamed in
 * chunks of STREAM_CHUNK, each made only when the connection took the last (`write` returned false → wait for
 * 'drain'), so a slow client never makes the server hold the whole body: at most a chunk and the socket's buffer.
 * Its Content-Length is sent when known up front, else it is chunked. Stops when the client goes away.
 */
async function writeBody(res: ServerResponse, code: number, contentType: string, body: BodyParts): Promise<void> {
  // The parts up to STREAM_THRESHOLD bytes tell a small body from a large one (taken as they are: a large body's
  // parts are not copied to find that out).
  const it = body.parts[Symbol.iterator]();
  const taken: Buffer[] = [];
  let takenBytes = 0;
  let next = it.next();
  for (; !next.done && takenBytes <= STREAM_THRESHOLD; next = it.next()) {
    taken.push(next.value);
    takenBytes += next.value.length;
  }
  res.statusCode = code;
  res.setHeader('Content-Type', contentType);
  if (next.done && takenBytes <= STREAM_THRESHOLD) {
    const whole = taken.length === 1 ? taken[0]! : Buffer.concat(taken, takenBytes);
    res.setHeader('Content-Length', whole.length);
    res.end(whole);
    return;
  }
  if (body.length !== undefined) res.setHeader('Content-Length', body.length);
  // 'close' comes when the client goes away (HTTP/2's compatible response has no `destroyed` to ask).
  let closed = false;
  const onClose = (): void => {
    closed = true;
  };
  res.once('close', onClose);
  let sinceYield = 0;
  const rest = gather(
    (function* () {
      yield* taken;
      for (let n = next; !n.done; n = it.next()) yield n.value;
    })(),
    STREAM_CHUNK,
  );
  try {
    for (const chunk of rest) {
      if (closed) return;
      if (!res.write(chunk)) {
        if (!closed) await writable(res);
        sinceYield = 0;
      } else if ((sinceYield += chunk.length) >= STREAM_YIELD_BYTES) {
        // The client keeps up: still let other requests run between megabytes.
        await new Promise((r) => setImmediate(r));
        sinceYield = 0;
      }
    }
    if (!closed) res.end();
  } finally {
    res.off('close', onClose);
  }
}

/**
 * Writes a list (or a Table) with a status code, as `writeObject` would, but streamed when large: its items are
 * encoded one by one as the connection takes them (the cached bytes of the watch cache's objects are written as
 * they are), never gathered into one string or buffer. YAML and `pretty` JSON are written whole.
 */
export async function writeList(
  res: ServerResponse,
  code: number,
  obj: ApiObject,
  format: Format,
  s: Serializers,
  pretty = false,
): Promise<void> {
  if (res.headersSent || res.writableEnded) return;
  const alias = responseGroupAlias(res);
  const out = alias ? respellObject(obj, alias) : obj;
  let body: BodyParts | undefined;
  if (format === 'json' && !pretty) body = jsonArrayParts(out, out.kind === 'Table' ? 'rows' : 'items');
  else if (format === 'protobuf') body = protobufListParts(s.protobuf, out);
  if (!body) return writeObject(res, code, obj, format, s, pretty);
  noteResponseObject(res, obj);
  await writeBody(res, code, responseContentType(res, format), body);
}

/** A hook for errors that are bugs (not StatusErrors): the server logs them. */
export type InternalErrorLogger = (err: unknown) => void;

/**
 * Writes any thrown value as a Status: a StatusError as it is, anything else as a 500 InternalError (reported to
 * `logBug`, since it is a bug). `Retry-After` is set from `details.retryAfterSeconds`. The format is the negotiated
 * one when known, else JSON.
 */
export function writeError(
  res: ServerResponse,
  err: unknown,
  s: Serializers,
  format: Format = 'json',
  logBug?: InternalErrorLogger,
): void {
  if (!isStatusError(err)) logBug?.(err);
  const status = errorToStatus(err).status;
  if (res.headersSent) {
    // The response already started (a stream): the connection is all that can be ended.
    res.destroy();
    return;
  }
  const retry = status.details?.retryAfterSeconds;
  if (retry && retry > 0) res.setHeader('Retry-After', String(retry));
  writeObject(res, status.code, status, format, s);
}
