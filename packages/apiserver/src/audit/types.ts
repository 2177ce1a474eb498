/**
 * The audit API, `audit.platform/v1` (Kubernetes' `audit.k8s.io/v1` renamed): the Event written for each stage of
 * an audited request, the EventList a webhook receives, and the Policy that says what is recorded.
 */
import { type ApiObject, type Status } from '@platform/api';

/** The audit API group. */
export const AUDIT_GROUP = 'audit.platform';
/** The default serialization version of events (`--audit-log-version`, `--audit-webhook-version`). */
export const AUDIT_V1 = `${AUDIT_GROUP}/v1`;
/** Versions events can be written in; both have the same fields. */
export const AUDIT_VERSIONS: readonly string[] = [AUDIT_V1, `${AUDIT_GROUP}/v1beta1`];

/** How much of a request is recorded, least first. */
export const LEVELS = ['None', 'Metadata', 'Request', 'RequestResponse'] as const;
export type Level = (typeof LEVELS)[number];

/** The stages at which an event is written. */
export const STAGES = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type Stage = (typeof STAGES)[number];

/** True when `level` records at least as much as `min`. */
export function levelAtLeast(level: Level, min: Level): boolean {
  return LEVELS.indexOf(level) >= LEVELS.indexOf(min);
}

/** The user of an event (authentication's view). */
export interface AuditUserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** What a resource request is about. */
export interface AuditObjectReference {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

/** The status of a response as an event carries it (`metadata` is always empty). */
export type AuditResponseStatus = Partial<Omit<Status, 'apiVersion' | 'kind'>> & {
  metadata: Record<string, never>;
  code: number;
};

/**
 * The key under which the events of one request's stages carry a {@link SharedJson}: a symbol, so that
 * `JSON.stringify` (the webhook's batches) leaves it out.
 */
export const SHARED_JSON: unique symbol = Symbol('audit.sharedJson');

/**
 * The JSON text of the fields that the stages of a request have in common (from `kind` to `objectRef`, but for
 * `stage`), written once for the first event that needs it and reused by the others while those fields are the same
 * objects (the event of each stage is a snapshot that holds them, not a copy).
 */
export interface SharedJson {
  /** The event the text was written for (none yet: nothing written). */
  of?: AuditEvent;
  /** The version the text was written in. */
  apiVersion: string;
  /** `{"kind":"Event","apiVersion":...,"level":...,"auditID":...,"stage":`. */
  head: string;
  /** `"requestURI":...` up to and with `objectRef`. */
  body: string;
}

/** One audit event: one stage of one request. Field order is Kubernetes' (the JSON output keeps it). */
export interface AuditEvent {
  kind: 'Event';
  apiVersion: string;
  level: Level;
  auditID: string;
  stage: Stage;
  requestURI: string;
  verb: string;
  user: AuditUserInfo;
  impersonatedUser?: AuditUserInfo;
  sourceIPs?: string[];
  userAgent?: string;
  objectRef?: AuditObjectReference;
  responseStatus?: AuditResponseStatus;
  requestObject?: unknown;
  responseObject?: unknown;
  /** RFC 3339 with microseconds. */
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
  [SHARED_JSON]?: SharedJson;
}

/** A batch of events, as a webhook receives it. */
export interface AuditEventList {
  kind: 'EventList';
  apiVersion: string;
  metadata: Record<string, never>;
  items: AuditEvent[];
}

/** A group and some of its resources (`resources` may be `*`, `pods/log`, `*\/status`, `pods/*`). */
export interface GroupResources {
  group?: string;
  resources?: string[];
  resourceNames?: string[];
}

/** One rule of a policy; every field given must match (empty ones match everything). */
export interface PolicyRule {
  level: Level;
  users?: string[];
  userGroups?: string[];
  verbs?: string[];
  resources?: GroupResources[];
  namespaces?: string[];
  nonResourceURLs?: string[];
  omitStages?: Stage[];
}

/** `audit.platform/v1` Policy: the first rule that matches a request decides its level. */
export interface Policy {
  apiVersion: string;
  kind: 'Policy';
  metadata?: ApiObject['metadata'];
  rules: PolicyRule[];
  omitStages?: Stage[];
}

/** Annotation set on an event whose request and response objects were dropped to fit the size limit. */
export const TRUNCATED_ANNOTATION = `${AUDIT_GROUP}/truncated`;
/** Annotations the authorization filter adds: the decision (`allow` or `forbid`) and the authorizer's reason. */
export const DECISION_ANNOTATION = 'authorization.platform/decision';
export const REASON_ANNOTATION = 'authorization.platform/reason';
