/**
 * certificates.platform CertificateSigningRequest in v1 and v1beta1 (Kubernetes 1.21 serves both; the schemas are
 * the same but for `signerName`, which v1 requires and v1beta1 defaults from the request, and the defaults of
 * v1beta1: usages `digital signature` + `key encipherment`, condition status `True`). Both versions share one
 * storage, as CronJob's do.
 *
 * The known signers are Kubernetes' `kubernetes.io/` signers renamed as the rest of the platform renames
 * `kubernetes.io/` prefixes (`platform.io/`) and the kubelet (the node agent); see {@link SIGNER_NAMES}.
 */
import { type Static, type TObject } from '@sinclair/typebox';

import { object, opt, ref, req, t } from '../../schema/schema';
import { defineKind, type Kind, OBJECT_HEAD, schemaPrefix } from '../../scheme/kind';
import { AGE_COLUMN } from '../../table/table';

/** The group of CertificateSigningRequest. */
export const CERTIFICATES_GROUP = 'certificates.platform';

/** The built-in signers (1.21's `kubernetes.io/...` names, renamed). */
export const SIGNER_NAMES = {
  /** `kubernetes.io/kube-apiserver-client`: client certificates the API server honours. */
  apiServerClient: 'platform.io/apiserver-client',
  /** `kubernetes.io/kube-apiserver-client-kubelet`: node agents' client certificates. */
  apiServerClientNodeAgent: 'platform.io/apiserver-client-node-agent',
  /** `kubernetes.io/kubelet-serving`: node agents' serving certificates. */
  nodeAgentServing: 'platform.io/node-agent-serving',
  /** `kubernetes.io/legacy-unknown`: anything else (v1beta1 only on create). */
  legacyUnknown: 'platform.io/legacy-unknown',
} as const;

function csrSchemas(version: string) {
  const P = schemaPrefix(CERTIFICATES_GROUP, version);
  const Spec = object(`${P}CertificateSigningRequestSpec`, {
    request: req(1, t.bytes(), 'The PEM-encoded PKCS#10 certificate request (base64 in JSON).'),
    signerName: (version === 'v1' ? req : opt)(7, t.string(), 'The requested signer, a qualified name.'),
    usages: opt(5, t.array(t.string()), 'Key usages requested in the issued certificate.'),
    username: opt(2, t.string(), 'The user that created the request (set by the API server).'),
    uid: opt(3, t.string(), 'The uid of the user that created the request (set by the API server).'),
    groups: opt(4, t.array(t.string()), 'The groups of the user that created the request (set by the API server).'),
    extra: opt(6, t.map(t.array(t.string())), 'Extra attributes of the requesting user (set by the API server).'),
  });
  const Condition = object(`${P}CertificateSigningRequestCondition`, {
    type: req(1, t.string(), 'Approved, Denied or Failed (other types may be added).'),
    status: (version === 'v1' ? req : opt)(
      6,
      t.string(),
      'True, False or Unknown; Approved, Denied and Failed are True.',
    ),
    reason: opt(2, t.string(), 'A brief reason for the condition.'),
    message: opt(3, t.string(), 'Human-readable details.'),
    lastUpdateTime: opt(4, t.time(), 'When the condition was last updated.'),
    lastTransitionTime: opt(5, t.time(), 'When the condition last changed from one status to another.'),
  });
  const Status = object(`${P}CertificateSigningRequestStatus`, {
    conditions: opt(1, t.array(ref(Condition)), 'Approved, Denied and Failed conditions.'),
    certificate: opt(2, t.bytes(), 'The issued certificate (PEM, base64 in JSON), set by the signer.'),
  });
  const Csr = object(
    `${P}CertificateSigningRequest`,
    {
      ...OBJECT_HEAD,
      spec: req(2, ref(Spec), 'The certificate request, and immutable facts about the requester.'),
      status: opt(3, ref(Status), 'Whether the request was approved, denied or failed, and the issued certificate.'),
    },
    { description: 'CertificateSigningRequest objects provide a mechanism to obtain x509 certificates.' },
  );
  return { Spec, Condition, Status, Csr };
}

const V1 = csrSchemas('v1');
const V1BETA1 = csrSchemas('v1beta1');

/** CertificateSigningRequest v1, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const CertificateSigningRequestSchema = V1.Csr;
/** CertificateSigningRequest v1beta1, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const CertificateSigningRequestV1beta1Schema = V1BETA1.Csr;
/** A CertificateSigningRequest in its JSON form (v1; v1beta1 differs only in what may be left out). */
export type CertificateSigningRequest = Static<typeof CertificateSigningRequestSchema>;
/** One condition of a CertificateSigningRequest. */
export type CertificateSigningRequestCondition = Static<typeof V1.Condition>;

/**
 * The CONDITION column (1.21 `extractCSRStatus`): Denied, Approved or Pending, then `,Failed` and `,Issued`.
 */
export function csrConditionSummary(csr: CertificateSigningRequest): string {
  const types = new Set((csr.status?.conditions ?? []).map((c) => c.type));
  let s = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) s += ',Failed';
  if (csr.status?.certificate) s += ',Issued';
  return s;
}

function csrKind<S extends TObject>(version: string, schema: S): Kind<S> {
  return defineKind({
    group: CERTIFICATES_GROUP,
    version,
    kind: 'CertificateSigningRequest',
    plural: 'certificatesigningrequests',
    shortNames: ['csr'],
    scope: 'Cluster',
    subresources: {
      status: { verbs: ['get', 'patch', 'update'] },
      approval: { verbs: ['get', 'patch', 'update'] },
    },
    schema,
    defaults(obj) {
      if (version !== 'v1beta1') return;
      const csr = obj as unknown as CertificateSigningRequest;
      // v1beta1's defaults (signerName is defaulted from the request by the API server's strategy: it parses it).
      if (csr.spec && csr.spec.usages === undefined) csr.spec.usages = ['digital signature', 'key encipherment'];
      for (const c of csr.status?.conditions ?? []) c.status ||= 'True';
    },
    columns: [
      AGE_COLUMN,
      {
        name: 'SignerName',
        type: 'string',
        description: 'The requested signer.',
        cell: (o) => (o as unknown as CertificateSigningRequest).spec?.signerName || '<none>',
      },
      {
        name: 'Requestor',
        type: 'string',
        description: 'Name of requestor',
        cell: (o) => (o as unknown as CertificateSigningRequest).spec?.username ?? '',
      },
      {
        name: 'Condition',
        type: 'string',
        description: 'Condition indicates if the certificate has been approved or denied',
        cell: (o) => csrConditionSummary(o as unknown as CertificateSigningRequest),
      },
    ],
    fields: {
      'spec.signerName': (o) => (o as unknown as CertificateSigningRequest).spec?.signerName ?? '',
    },
  });
}

/** The CertificateSigningRequest kind (v1): discovery facts, defaults, printer columns and field selectors. */
export const CertificateSigningRequestKind = csrKind('v1', CertificateSigningRequestSchema);
/** The CertificateSigningRequest kind (v1beta1). */
export const CertificateSigningRequestV1beta1Kind = csrKind('v1beta1', CertificateSigningRequestV1beta1Schema);
