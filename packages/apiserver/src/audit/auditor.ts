/**
 * The auditor (model: apiserver `pkg/endpoints/filters/audit.go` and `pkg/audit/request.go`): from a request and
 * its user it evaluates the policy, builds the event and writes each stage to the backend.
 *
 * Stages: RequestReceived as soon as the request is authenticated; ResponseStarted when the headers of a
 * long-running request (watch, proxy, logs) go out; ResponseComplete when the response ends; Panic when the handler
 * failed unexpectedly. Stages in the policy's (or rule's) `omitStages` are not written. The request and response
 * objects are added at levels Request and RequestResponse; the `responseStatus` carries the code, and the whole
 * Status for answers that are one.
 */
import { randomUUID } from 'node:crypto';
import { type IncomingMessage } from 'node:http';

import { type Logger } from '@platform/common';
import * as yaml from 'js-yaml';

import { type Attributes, attributesOf } from '../auth/authorizer';
import { type RequestInfo } from '../endpoints/request-info';
import { type UserInfo } from '../registry/rest/rest';
import { type AuditBackend } from './backend';
import { type AuditRecord, completeObjectRef, getReceivedTime, setAuditRecord } from './context';
import { microTime, plainStatus, preciseNow, sourceIPs } from './event';
import { type PolicyEvaluator } from './policy';
import {
  AUDIT_V1,
  type AuditEvent,
  SHARED_JSON,
  type AuditObjectReference,
  type AuditUserInfo,
  type Level,
  levelAtLeast,
  type Stage,
} from './types';

/** Turns a raw request body into the object an event shows (JSON, YAML or Protobuf). */
export type BodyDecoder = (body: Buffer, contentType: string) => unknown;

/** The default body decoder: JSON and YAML; anything else is shown as base64. */
export const defaultBodyDecoder: BodyDecoder = (body, contentType) => {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  const text = body.toString('utf8');
  if (type.endsWith('json') || type === '') return JSON.parse(text);
  if (type.endsWith('yaml')) return yaml.load(text, { json: true });
  return { contentEncoding: 'base64', raw: body.toString('base64') };
};

/** An audit ID a client sent (`Audit-ID`) is kept when it is short and printable; otherwise a new one is made. */
const CLIENT_AUDIT_ID = /^[\x21-\x7e]{1,128}$/;

function userOf(u: UserInfo | undefined): AuditUserInfo {
  if (!u) return {};
  const user: AuditUserInfo = { username: u.name };
  if (u.uid) user.uid = u.uid;
  if (u.groups.length > 0) user.groups = u.groups.slice();
  if (u.extra && Object.keys(u.extra).length > 0) user.extra = u.extra;
  return user;
}

/** The object reference of a request, from its path (undefined for a non-resource request). */
export function objectRefOf(info: RequestInfo): AuditObjectReference | undefined {
  if (!info.isResourceRequest) return undefined;
  const ref: AuditObjectReference = {};
  if (info.resource) ref.resource = info.resource;
  if (info.namespace) ref.namespace = info.namespace;
  if (info.name) ref.name = info.name;
  ref.apiGroup = info.apiGroup;
  if (info.apiVersion) ref.apiVersion = info.apiVersion;
  if (info.subresource) ref.subresource = info.subresource;
  return ref;
}

/** Options of an {@link Auditor}. */
export interface AuditorOptions {
  /** Decodes recorded raw bodies (patches, delete options). Default {@link defaultBodyDecoder}. */
  decodeBody?: BodyDecoder;
  /** Epoch ms with a fraction (default: the high-resolution clock). */
  now?: () => number;
}

/** Evaluates the policy and writes events; one per server. */
export class Auditor {
  private readonly now: () => number;
  private readonly decodeBody: BodyDecoder;

  constructor(
    readonly evaluator: PolicyEvaluator,
    readonly backend: AuditBackend,
    private readonly log: Logger,
    o: AuditorOptions = {},
  ) {
    this.now = o.now ?? preciseNow;
    this.decodeBody = o.decodeBody ?? defaultBodyDecoder;
  }

  /** The level and omitted stages of a request with these attributes. */
  decide(a: Attributes): { level: Level; omitStages: ReadonlySet<Stage> } {
    return this.evaluator.evaluate(a);
  }

  /**
   * Starts auditing an authenticated request: evaluates the policy and, unless the level is None, attaches and
   * returns the record (the caller writes the stages). `user` undefined: authentication failed.
   */
  begin(req: IncomingMessage, info: RequestInfo, user: UserInfo | undefined): AuditRecord | undefined {
    const a = attributesOf(info, user ?? { name: '', groups: [] });
    const { level, omitStages } = this.evaluator.evaluate(a);
    if (level === 'None') return undefined;
    const received = microTime(getReceivedTime(req) ?? this.now());
    const sent = req.headers['audit-id'];
    const auditID = typeof sent === 'string' && CLIENT_AUDIT_ID.test(sent) ? sent : randomUUID();
    const objectRef = objectRefOf(info);
    const userAgent = req.headers['user-agent'];
    const event: AuditEvent = {
      kind: 'Event',
      apiVersion: AUDIT_V1,
      level,
      auditID,
      stage: 'RequestReceived',
      requestURI: req.url ?? '/',
      verb: info.verb,
      user: userOf(user),
      sourceIPs: sourceIPs(req),
      // Fields without a value are left undefined (one shape for every event; JSON leaves them out).
      userAgent: userAgent || undefined,
      objectRef,
      requestReceivedTimestamp: received,
      stageTimestamp: received,
      [SHARED_JSON]: { apiVersion: '', head: '', body: '' },
    };
    const rec: AuditRecord = { level, omitStages, event, completed: false, annotationsShared: false };
    setAuditRecord(req, rec);
    return rec;
  }

  /** The event of a stage: a snapshot of the record (objects per level), with its time stamp. */
  snapshot(rec: AuditRecord, stage: Stage, code?: number): AuditEvent {
    // The object reference and the annotations are shared, not copied: they are replaced, never changed, once an
    // event may hold them (audit/context). One literal of every field (a spread of the record's event cost more).
    const e = rec.event;
    if (e.annotations) rec.annotationsShared = true;
    const ev: AuditEvent = {
      kind: e.kind,
      apiVersion: e.apiVersion,
      level: e.level,
      auditID: e.auditID,
      stage,
      requestURI: e.requestURI,
      verb: e.verb,
      user: e.user,
      impersonatedUser: e.impersonatedUser,
      sourceIPs: e.sourceIPs,
      userAgent: e.userAgent,
      objectRef: e.objectRef,
      responseStatus: e.responseStatus,
      requestObject: e.requestObject,
      responseObject: e.responseObject,
      requestReceivedTimestamp: e.requestReceivedTimestamp,
      stageTimestamp: microTime(this.now()),
      annotations: e.annotations,
      [SHARED_JSON]: e[SHARED_JSON],
    };
    if (code !== undefined) {
      ev.responseStatus = rec.responseStatus ? { metadata: {}, ...rec.responseStatus, code } : plainStatus(code);
    }
    if (stage !== 'RequestReceived') {
      const keepsRequest = levelAtLeast(rec.level, 'Request');
      if (rec.requestBody && (keepsRequest || (rec.event.objectRef && !rec.event.objectRef.name))) {
        this.decodeRequestBody(rec);
        ev.objectRef = rec.event.objectRef;
      }
      if (keepsRequest && rec.requestObject !== undefined) ev.requestObject = rec.requestObject;
      if (stage === 'ResponseComplete' && rec.responseObject !== undefined) ev.responseObject = rec.responseObject;
    }
    return ev;
  }

  /** Decodes the recorded raw body once: the request object, and the name of a create. */
  private decodeRequestBody(rec: AuditRecord): void {
    const { body, contentType } = rec.requestBody!;
    rec.requestBody = undefined;
    let obj: unknown;
    try {
      obj = this.decodeBody(body, contentType);
    } catch {
      // A body the handler rejected as malformed: it is shown as it came.
      obj = { contentEncoding: 'base64', raw: body.toString('base64') };
    }
    completeObjectRef(rec, obj);
    if (levelAtLeast(rec.level, 'Request')) rec.requestObject = obj;
  }

  /**
   * Writes a stage (unless omitted). Returns (or resolves) false only when a blocking-strict sink failed; in batch
   * mode it returns synchronously.
   */
  emit(rec: AuditRecord, stage: Stage, code?: number): boolean | Promise<boolean> {
    if (rec.omitStages.has(stage)) return true;
    if (stage === 'ResponseComplete' || stage === 'Panic') rec.completed = true;
    return this.backend.processEvents([this.snapshot(rec, stage, code)]);
  }

  /** Writes one finished event directly (failed authentication). */
  emitEvent(ev: AuditEvent): boolean | Promise<boolean> {
    return this.backend.processEvents([ev]);
  }

  /** The current time as an event time stamp. */
  stamp(): string {
    return microTime(this.now());
  }

  /** Flushes and stops the backends. */
  async shutdown(): Promise<void> {
    try {
      await this.backend.shutdown();
    } catch (err) {
      this.log.error('Audit backends did not shut down cleanly', { err });
    }
  }
}
