/**
 * The CertificateSigningRequest strategies (model: Kubernetes 1.21 `pkg/registry/certificates/certificates/
 * strategy.go`): on create the status is cleared and the requester's name, uid, groups and extra are recorded from
 * the authenticated user (whatever the body said); the spec never changes after that. `/status` writes the
 * certificate and conditions other than Approved/Denied (which it keeps); `/approval` writes only the conditions.
 * Conditions get their update and transition times when the writer leaves them out.
 */
import { type ApiObject, type CertificateSigningRequest, type Kind, SIGNER_NAMES } from '@platform/api';
import {
  type CertificateRequest,
  nodeClientRequestProblem,
  nodeServingRequestProblem,
  parseCertificateRequest,
} from '@platform/common';

import { defaultStrategy, statusStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type RequestContext, type UpdateStrategy } from '../../rest/rest';
import { csrBytes, csrValidationOptions, validateCsr, validateCsrUpdate } from './validation';

/** v1beta1's default signer (1.21 `DefaultSignerNameFromSpec`): guessed from what the request asks for. */
export function defaultSignerName(csr: CertificateSigningRequest): string {
  let r: CertificateRequest;
  try {
    r = parseCertificateRequest(csrBytes(csr.spec?.request));
  } catch {
    return SIGNER_NAMES.legacyUnknown;
  }
  const usages = csr.spec?.usages ?? [];
  if (!nodeServingRequestProblem(r, usages)) return SIGNER_NAMES.nodeAgentServing;
  if (!nodeClientRequestProblem(r, usages)) return SIGNER_NAMES.apiServerClientNodeAgent;
  return SIGNER_NAMES.legacyUnknown;
}

/** Fills in the condition times a writer left out (1.21 `populateConditionTimestamps`). */
function populateConditionTimestamps(
  ctx: RequestContext,
  csr: CertificateSigningRequest,
  old: CertificateSigningRequest,
): void {
  const now = new Date(Math.floor(ctx.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  for (const c of csr.status?.conditions ?? []) {
    c.lastUpdateTime ||= now;
    if (!c.lastTransitionTime) {
      const same = (old.status?.conditions ?? []).find(
        (o) => o.type === c.type && o.status === c.status && o.lastTransitionTime,
      );
      c.lastTransitionTime = same?.lastTransitionTime ?? now;
    }
  }
}

const asCsr = (o: ApiObject): CertificateSigningRequest => o as CertificateSigningRequest;

/** The strategy of `certificatesigningrequests` in `kind`'s version. */
export function csrStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    prepareForCreate(ctx, obj) {
      const csr = asCsr(obj);
      csr.spec ??= { request: '', signerName: '' };
      const spec = csr.spec;
      delete spec.username;
      delete spec.uid;
      delete spec.groups;
      delete spec.extra;
      const user = ctx.user;
      if (user) {
        if (user.name) spec.username = user.name;
        if (user.uid) spec.uid = user.uid;
        if (user.groups.length) spec.groups = [...user.groups];
        if (user.extra && Object.keys(user.extra).length) spec.extra = structuredClone(user.extra);
      }
      if (kind.version === 'v1beta1' && !spec.signerName) spec.signerName = defaultSignerName(csr);
    },
    prepareForUpdate(_ctx, obj, old) {
      // The spec is immutable: what the body says is replaced by the stored spec.
      asCsr(obj).spec = structuredClone(asCsr(old).spec);
    },
    validate: (_ctx, obj) => validateCsr(asCsr(obj), csrValidationOptions(kind.version, asCsr(obj), undefined)),
    validateUpdate: (_ctx, obj, old) =>
      validateCsrUpdate(asCsr(obj), asCsr(old), csrValidationOptions(kind.version, asCsr(obj), asCsr(old))),
  });
}

/** The strategy of `certificatesigningrequests/status`: the certificate and the non-approval conditions. */
export function csrStatusStrategy(kind: Kind): UpdateStrategy {
  return statusStrategy({
    prepareForUpdate(ctx, obj, old) {
      const csr = asCsr(obj);
      const before = asCsr(old);
      // Approved and Denied conditions are kept as stored (1.21 `preserveConditionsOfType`): where the body has as
      // many of a type as the stored object, they are the stored ones; adding or dropping one fails validation.
      for (const type of ['Approved', 'Denied']) {
        const stored = (before.status?.conditions ?? []).filter((c) => c.type === type);
        const given = (csr.status?.conditions ?? []).filter((c) => c.type === type);
        if (stored.length !== given.length || stored.length === 0) continue;
        let k = 0;
        csr.status!.conditions = csr.status!.conditions!.map((c) =>
          c.type === type ? structuredClone(stored[k++]!) : c,
        );
      }
      populateConditionTimestamps(ctx, csr, before);
    },
    validateUpdate: (_ctx, obj, old) =>
      validateCsrUpdate(asCsr(obj), asCsr(old), {
        ...csrValidationOptions(kind.version, asCsr(obj), asCsr(old)),
        allowSettingCertificate: true,
      }),
  });
}

/** The strategy of `certificatesigningrequests/approval`: only the conditions change. */
export function csrApprovalStrategy(kind: Kind): UpdateStrategy {
  return statusStrategy({
    prepareForUpdate(ctx, obj, old) {
      const csr = asCsr(obj);
      const before = asCsr(old);
      const conditions = csr.status?.conditions;
      csr.status = structuredClone(before.status ?? {});
      if (conditions) csr.status.conditions = conditions;
      else delete csr.status.conditions;
      populateConditionTimestamps(ctx, csr, before);
    },
    validateUpdate: (_ctx, obj, old) =>
      validateCsrUpdate(asCsr(obj), asCsr(old), {
        ...csrValidationOptions(kind.version, asCsr(obj), asCsr(old)),
        allowSettingApprovalConditions: true,
      }),
  });
}
