/**
 * AdmissionReview (`admission.platform/v1`, and v1beta1 for webhooks that only accept it): the request the API
 * server sends a webhook, and the checks on what comes back (model: apiserver
 * `pkg/admission/plugin/webhook/request/admissionreview.go`). The Kubernetes spelling `admission.k8s.io` is accepted
 * in responses, so webhooks written for Kubernetes work unchanged.
 */
import { randomUUID } from 'node:crypto';

import { type ApiObject } from '@platform/api';

import { type AdmissionAttributes } from '../interfaces';

/** The admission API group. */
export const ADMISSION_GROUP = 'admission.platform';
const GROUP_SPELLINGS = [ADMISSION_GROUP, 'admission.k8s.io'];

/** An AdmissionReview request as sent. */
export interface AdmissionReviewRequest {
  apiVersion: string;
  kind: 'AdmissionReview';
  request: {
    uid: string;
    kind: { group: string; version: string; kind: string };
    resource: { group: string; version: string; resource: string };
    subResource?: string;
    requestKind: { group: string; version: string; kind: string };
    requestResource: { group: string; version: string; resource: string };
    requestSubResource?: string;
    name?: string;
    namespace?: string;
    operation: string;
    userInfo: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
    object?: ApiObject;
    oldObject?: ApiObject;
    dryRun: boolean;
    options?: { apiVersion: string; kind: string; dryRun?: string[] };
  };
}

/** The checked response of a webhook. */
export interface AdmissionResponse {
  allowed: boolean;
  status?: { code?: number; reason?: string; message?: string };
  patch?: string;
  patchType?: string;
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

const OPTIONS_KIND: Record<string, string> = {
  CREATE: 'CreateOptions',
  UPDATE: 'UpdateOptions',
  DELETE: 'DeleteOptions',
};

/** The version of AdmissionReview to send: the first the webhook accepts that this server speaks. */
export function reviewVersion(accepted: readonly string[]): string | undefined {
  return accepted.find((v) => v === 'v1' || v === 'v1beta1');
}

/** Builds the review of a request. */
export function buildReview(a: AdmissionAttributes, version: string): AdmissionReviewRequest {
  const u = a.user;
  const optionsKind = OPTIONS_KIND[a.operation];
  return {
    apiVersion: `${ADMISSION_GROUP}/${version}`,
    kind: 'AdmissionReview',
    request: {
      uid: randomUUID(),
      kind: a.kind,
      resource: a.resource,
      ...(a.subresource ? { subResource: a.subresource } : {}),
      requestKind: a.kind,
      requestResource: a.resource,
      ...(a.subresource ? { requestSubResource: a.subresource } : {}),
      ...(a.name ? { name: a.name } : {}),
      ...(a.namespace ? { namespace: a.namespace } : {}),
      operation: a.operation,
      userInfo: u
        ? {
            username: u.name,
            ...(u.uid ? { uid: u.uid } : {}),
            groups: u.groups,
            ...(u.extra ? { extra: u.extra } : {}),
          }
        : {},
      ...(a.object ? { object: a.object } : {}),
      ...(a.oldObject ? { oldObject: a.oldObject } : {}),
      dryRun: a.dryRun,
      ...(optionsKind
        ? {
            options: {
              apiVersion: 'meta.platform/v1',
              kind: optionsKind,
              ...(a.dryRun ? { dryRun: ['All'] } : {}),
            },
          }
        : {}),
    },
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Checks a webhook's answer to `sent`; throws an Error saying what is wrong with it. */
export function parseReviewResponse(body: unknown, sent: AdmissionReviewRequest, mutating: boolean): AdmissionResponse {
  if (!isObject(body)) throw new Error('the response is not a JSON object');
  const [group, version] = String(body.apiVersion ?? '').split('/');
  const [, sentVersion] = sent.apiVersion.split('/');
  if (body.kind !== 'AdmissionReview' || !GROUP_SPELLINGS.includes(group ?? '') || version !== sentVersion) {
    throw new Error(
      `expected response of kind AdmissionReview in ${sent.apiVersion}, got ${JSON.stringify(body.kind)} in ${JSON.stringify(body.apiVersion)}`,
    );
  }
  const r = body.response;
  if (!isObject(r)) throw new Error('the response has no response field');
  if (r.uid !== sent.request.uid) {
    throw new Error(`expected response.uid=${JSON.stringify(sent.request.uid)}, got ${JSON.stringify(r.uid)}`);
  }
  if (typeof r.allowed !== 'boolean') throw new Error('response.allowed must be a boolean');
  const out: AdmissionResponse = { allowed: r.allowed };
  if (isObject(r.status)) out.status = r.status as AdmissionResponse['status'];
  if (Array.isArray(r.warnings)) out.warnings = r.warnings.filter((w): w is string => typeof w === 'string');
  if (r.patch !== undefined || r.patchType !== undefined) {
    if (!mutating) throw new Error('a validating webhook may not return a patch');
    if (r.patchType !== 'JSONPatch') throw new Error(`unsupported patchType ${JSON.stringify(r.patchType)}`);
    if (typeof r.patch !== 'string') throw new Error('response.patch must be a base64 string');
    out.patchType = 'JSONPatch';
    out.patch = r.patch;
  }
  return out;
}
