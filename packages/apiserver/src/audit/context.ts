/**
 * The audit record of a request, kept on the request behind a module-private symbol (as filters/request-info.ts
 * keeps its data), and the hooks through which the rest of the server contributes to it: the objects the handlers
 * decode and encode, and annotations (the authorizer's decision). Every hook is a no-op on a request that is not
 * audited, or audited at a level that does not keep what it is given, so that calling it costs nothing then.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';

import { requestState } from '../filters/request-info';
import { type AuditEvent, type Level, levelAtLeast, type Stage } from './types';

/** What the audit filter keeps about one audited request. */
export interface AuditRecord {
  level: Level;
  omitStages: ReadonlySet<Stage>;
  /** The event as it stands; each stage is written as a copy with its stage and time stamp. */
  event: AuditEvent;
  /** The decoded request object (level Request and up). */
  requestObject?: unknown;
  /** The raw request body and its content type, decoded when an event needs it. */
  requestBody?: { body: Buffer; contentType: string };
  /** The last object written in the response (level RequestResponse). */
  responseObject?: unknown;
  /** The Status the response carried, if it was one. */
  responseStatus?: Record<string, unknown>;
  /** Set once ResponseComplete or Panic has been written. */
  completed: boolean;
  /** A written event holds `event.annotations`: the next annotation goes into a copy. */
  annotationsShared: boolean;
}

/** The audit record of a request, when it is audited. */
export function getAuditRecord(req: IncomingMessage): AuditRecord | undefined {
  return requestState(req).audit as AuditRecord | undefined;
}

/** Attaches the record (the audit filter only). */
export function setAuditRecord(req: IncomingMessage, rec: AuditRecord): void {
  requestState(req).audit = rec;
}

/** When the request arrived (epoch ms, fractional), as recorded before authentication. */
export function getReceivedTime(req: IncomingMessage): number | undefined {
  return requestState(req).received;
}

/** Records when the request arrived (the first filter). */
export function setReceivedTime(req: IncomingMessage, ms: number): void {
  requestState(req).received = ms;
}

/** Adds an annotation to the request's audit events (from now on). No-op when the request is not audited. */
export function addAuditAnnotation(req: IncomingMessage, key: string, value: string): void {
  const rec = getAuditRecord(req);
  if (!rec) return;
  // Copy on write: the events already queued share the previous object.
  let annotations = rec.event.annotations;
  if (!annotations || rec.annotationsShared) {
    annotations = Object.assign({}, annotations);
    rec.event.annotations = annotations;
    rec.annotationsShared = false;
  }
  annotations[key] = value;
}

/**
 * Records the object a handler decoded from the request body (create, update; before admission changes it). Fills
 * the event's object reference from the object's metadata where the path left it empty (the name of a create).
 */
export function noteRequestObject(req: IncomingMessage, obj: unknown): void {
  const rec = getAuditRecord(req);
  if (!rec) return;
  completeObjectRef(rec, obj);
  rec.requestBody = undefined;
  if (levelAtLeast(rec.level, 'Request')) rec.requestObject = structuredClone(obj);
}

/** Fills the empty fields of the event's object reference from an object's metadata. */
export function completeObjectRef(rec: AuditRecord, obj: unknown): void {
  const meta = (obj as { metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string } })
    ?.metadata;
  const old = rec.event.objectRef;
  if (!old || !meta || typeof meta !== 'object') return;
  // Copy on write: the events already queued share the previous reference.
  const ref = { ...old };
  if (!ref.namespace && typeof meta.namespace === 'string' && meta.namespace) ref.namespace = meta.namespace;
  if (!ref.name && typeof meta.name === 'string' && meta.name) ref.name = meta.name;
  if (!ref.uid && typeof meta.uid === 'string' && meta.uid) ref.uid = meta.uid;
  if (!ref.resourceVersion && typeof meta.resourceVersion === 'string' && meta.resourceVersion)
    ref.resourceVersion = meta.resourceVersion;
  rec.event.objectRef = ref;
}

/**
 * Records a raw request body as it arrived (before admission changes anything). It is decoded only when an event
 * needs it: for the request object (levels Request and up), or for the name of a create.
 */
export function noteRequestBody(req: IncomingMessage, body: Buffer): void {
  const rec = getAuditRecord(req);
  if (!rec || body.length === 0 || rec.requestObject !== undefined) return;
  rec.requestBody = { body, contentType: String(req.headers['content-type'] ?? 'application/json') };
}

/** Records an object written as the response (responses/writers). */
export function noteResponseObject(res: ServerResponse, obj: unknown): void {
  const req = (res as ServerResponse & { req?: IncomingMessage }).req;
  const rec = req && getAuditRecord(req);
  if (!rec) return;
  if ((obj as { kind?: unknown })?.kind === 'Status') {
    const { apiVersion: _v, kind: _k, metadata: _m, ...status } = obj as Record<string, unknown>;
    rec.responseStatus = status;
  }
  if (levelAtLeast(rec.level, 'RequestResponse')) rec.responseObject = obj;
}
