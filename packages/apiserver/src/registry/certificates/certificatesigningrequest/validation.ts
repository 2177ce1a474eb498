/**
 * CertificateSigningRequest validation (model: Kubernetes 1.21 `pkg/apis/certificates/validation`): the request
 * is a PEM PKCS#10 request whose signature verifies, usages are given once each, the signer name is a qualified
 * `<domain>/<path>` (the legacy-unknown signer only through v1beta1), conditions are well formed, the certificate
 * is PEM certificates; updates may not remove Approved/Denied/Failed conditions, the main resource and `/status`
 * may not change approval, only `/status` may set the certificate, and once set it may not change.
 *
 * v1beta1 requests are judged more leniently, as 1.21 does, and so are updates of objects that already break a rule
 * (stored data stays writable).
 */
import { X509Certificate } from 'node:crypto';

import {
  type CertificateSigningRequest,
  type CertificateSigningRequestCondition,
  type FieldError,
  FieldPath,
  field,
  isDNS1123Label,
  isDNS1123Subdomain,
  SIGNER_NAMES,
} from '@platform/api';
import { parseCertificateRequest } from '@platform/common';

/** What a write may do beyond the rules (1.21 `certificateValidationOptions`). */
export interface CsrValidationOptions {
  allowSettingApprovalConditions: boolean;
  allowSettingCertificate: boolean;
  allowBothApprovedAndDenied: boolean;
  allowResettingCertificate: boolean;
  allowLegacySignerName: boolean;
  allowDuplicateConditionTypes: boolean;
  allowEmptyConditionType: boolean;
  allowArbitraryCertificate: boolean;
  allowDuplicateUsages: boolean;
}

const TRUE_ONLY = new Set(['Approved', 'Denied', 'Failed']);
const ALL_STATUS = ['False', 'True', 'Unknown'];
const DNS1123_SUBDOMAIN_MAX = 253;
const DNS1123_LABEL_MAX = 63;

/** Decodes `[]byte` fields (base64 in JSON). */
export function csrBytes(b64: string | undefined): Buffer {
  return Buffer.from(b64 ?? '', 'base64');
}

/** Checks `status.certificate`: zero or more PEM CERTIFICATE blocks, without headers, each parsing. */
export function certificateProblem(pem: Buffer): string | undefined {
  if (pem.length === 0) return undefined;
  const text = pem.toString('latin1');
  const re = /-----BEGIN ([^-\n]+)-----\r?\n([\s\S]*?)-----END \1-----/g;
  let blocks = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[1] !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found ${JSON.stringify(m[1])}`;
    if (/^[^\s:]+:/m.test(m[2]!)) return 'no PEM block headers are permitted';
    blocks++;
    try {
      new X509Certificate(Buffer.from(m[2]!.replace(/\s+/g, ''), 'base64'));
    } catch (err) {
      return `x509: malformed certificate: ${(err as Error).message}`;
    }
  }
  return blocks === 0 ? 'must contain at least one CERTIFICATE PEM block' : undefined;
}

/** 1.21 `ValidateSignerName`: `<fully qualified domain>/<path>`, with its length limits. */
export function validateSignerName(path: FieldPath, signerName: string | undefined): FieldError[] {
  if (!signerName) return [field.required(path, 'signerName must be provided')];
  const segments = signerName.split('/');
  if (segments.length !== 2) {
    return [
      field.invalid(
        path,
        signerName,
        "must be a fully qualified domain and path of the form 'example.com/signer-name'",
      ),
    ];
  }
  const [domain, rest] = segments as [string, string];
  const errs: FieldError[] = [];
  if (domain.length > DNS1123_SUBDOMAIN_MAX) errs.push(field.tooLong(path, domain, DNS1123_SUBDOMAIN_MAX));
  const labels = domain.split('.');
  for (const label of labels) {
    const problems = isDNS1123Label(label);
    if (problems.length) {
      errs.push(...problems.map((p) => field.invalid(path, domain, `validating label ${JSON.stringify(label)}: ${p}`)));
      break;
    }
  }
  if (labels.length < 2)
    errs.push(field.invalid(path, domain, 'should be a domain with at least two segments separated by dots'));
  for (const label of rest.split('.')) {
    const problems = isDNS1123Subdomain(label);
    if (problems.length) {
      errs.push(...problems.map((p) => field.invalid(path, rest, `validating label ${JSON.stringify(label)}: ${p}`)));
      break;
    }
  }
  const max = DNS1123_SUBDOMAIN_MAX + (DNS1123_SUBDOMAIN_MAX + DNS1123_LABEL_MAX + 1) + 1;
  if (signerName.length > max) errs.push(field.tooLong(path, signerName, max));
  return errs;
}

function validateConditions(csr: CertificateSigningRequest, o: CsrValidationOptions): FieldError[] {
  const path = new FieldPath('status', 'conditions');
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  (csr.status?.conditions ?? []).forEach((c, i) => {
    const at = path.index(i);
    if (!o.allowEmptyConditionType && !c.type) errs.push(field.required(at.child('type')));
    const allowed = TRUE_ONLY.has(c.type) ? ['True'] : ALL_STATUS;
    if (!c.status) errs.push(field.required(at.child('status')));
    else if (!allowed.includes(c.status)) errs.push(field.notSupported(at.child('status'), c.status, allowed));
    if (!o.allowBothApprovedAndDenied) {
      if (c.type === 'Approved') {
        approved = true;
        if (denied)
          errs.push(field.invalid(at.child('type'), c.type, 'Approved and Denied conditions are mutually exclusive'));
      } else if (c.type === 'Denied') {
        denied = true;
        if (approved)
          errs.push(field.invalid(at.child('type'), c.type, 'Approved and Denied conditions are mutually exclusive'));
      }
    }
    if (!o.allowDuplicateConditionTypes) {
      if (seen.has(c.type)) errs.push(field.duplicate(at.child('type'), c.type));
      seen.add(c.type);
    }
  });
  return errs;
}

/** Every problem of a CertificateSigningRequest (metadata is the store's). */
export function validateCsr(csr: CertificateSigningRequest, o: CsrValidationOptions): FieldError[] {
  const spec = new FieldPath('spec');
  const errs: FieldError[] = [];
  const request = csrBytes(csr.spec?.request);
  try {
    parseCertificateRequest(request).checkSignature();
  } catch (err) {
    errs.push(field.invalid(spec.child('request'), request.toString('latin1'), (err as Error).message));
  }
  const usages = csr.spec?.usages ?? [];
  if (usages.length === 0) errs.push(field.required(spec.child('usages'), 'usages must be provided'));
  if (!o.allowDuplicateUsages) {
    const seen = new Set<string>();
    usages.forEach((u, i) => {
      if (seen.has(u)) errs.push(field.duplicate(spec.child('usages').index(i), u));
      seen.add(u);
    });
  }
  const signerName = csr.spec?.signerName;
  if (!o.allowLegacySignerName && signerName === SIGNER_NAMES.legacyUnknown) {
    errs.push(
      field.invalid(spec.child('signerName'), signerName, 'the legacy signerName is not allowed via this API version'),
    );
  } else {
    errs.push(...validateSignerName(spec.child('signerName'), signerName));
  }
  errs.push(...validateConditions(csr, o));
  if (!o.allowArbitraryCertificate) {
    const problem = certificateProblem(csrBytes(csr.status?.certificate));
    if (problem) errs.push(field.invalid(new FieldPath('status', 'certificate'), '<certificate data>', problem));
  }
  return errs;
}

function conditionsOf(csr: CertificateSigningRequest | undefined, type: string): CertificateSigningRequestCondition[] {
  return (csr?.status?.conditions ?? []).filter((c) => c.type === type);
}

/** The options of a write through `version`, given the stored object (undefined on create). */
export function csrValidationOptions(
  version: string,
  obj: CertificateSigningRequest,
  old: CertificateSigningRequest | undefined,
): CsrValidationOptions {
  const beta = version === 'v1beta1';
  const types = (old?.status?.conditions ?? []).map((c) => c.type);
  const usages = old?.spec?.usages ?? [];
  const sameCertificate = old !== undefined && (obj.status?.certificate ?? '') === (old.status?.certificate ?? '');
  return {
    allowSettingApprovalConditions: false,
    allowSettingCertificate: false,
    allowResettingCertificate: beta,
    allowBothApprovedAndDenied: types.includes('Approved') && types.includes('Denied'),
    allowLegacySignerName: beta || old?.spec?.signerName === SIGNER_NAMES.legacyUnknown,
    allowDuplicateConditionTypes: beta || new Set(types).size !== types.length,
    allowEmptyConditionType: beta || types.includes(''),
    allowArbitraryCertificate:
      beta ||
      sameCertificate ||
      (old !== undefined && certificateProblem(csrBytes(old.status?.certificate)) !== undefined),
    allowDuplicateUsages: beta || new Set(usages).size !== usages.length,
  };
}

/** The rules of an update on top of {@link validateCsr}. */
export function validateCsrUpdate(
  csr: CertificateSigningRequest,
  old: CertificateSigningRequest,
  o: CsrValidationOptions,
): FieldError[] {
  const errs = validateCsr(csr, o);
  const conditions = new FieldPath('status', 'conditions');
  for (const t of ['Approved', 'Denied', 'Failed']) {
    if (conditionsOf(csr, t).length < conditionsOf(old, t).length) {
      errs.push(field.forbidden(conditions, `updates may not remove a condition of type ${JSON.stringify(t)}`));
    }
  }
  if (!o.allowSettingApprovalConditions) {
    for (const t of ['Approved', 'Denied']) {
      const before = conditionsOf(old, t);
      const after = conditionsOf(csr, t);
      if (after.length > before.length) {
        errs.push(field.forbidden(conditions, `updates may not add a condition of type ${JSON.stringify(t)}`));
      } else if (after.length === before.length && JSON.stringify(after) !== JSON.stringify(before)) {
        errs.push(field.forbidden(conditions, `updates may not modify a condition of type ${JSON.stringify(t)}`));
      }
    }
  }
  const cert = csr.status?.certificate ?? '';
  const oldCert = old.status?.certificate ?? '';
  if (cert !== oldCert) {
    const path = new FieldPath('status', 'certificate');
    if (!o.allowSettingCertificate) errs.push(field.forbidden(path, 'updates may not set certificate content'));
    else if (!o.allowResettingCertificate && oldCert !== '') {
      errs.push(field.forbidden(path, 'updates may not modify existing certificate content'));
    }
  }
  return errs;
}
