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
import { encodeJson, encodeProtobuf } from './encode-cache';

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
