/**
 * The CSR approving controller (model: Kubernetes 1.21 `pkg/controller/certificates/approver/sarapprove.go`):
 * approves node agents' client certificate requests when the requester may: a request for the requester's own
 * node name (`system:node:<name>` requested by `system:node:<name>`, a renewal) needs `create` on
 * `certificatesigningrequests/selfnodeclient`, any other node client request (a bootstrap) needs `create` on
 * `certificatesigningrequests/nodeclient`, both asked with a SubjectAccessReview as the requester. Requests it
 * does not recognise, or whose requester may not, are left for someone else to approve or deny.
 */
import {
  type CertificateSigningRequest,
  CertificateSigningRequestKind,
  CERTIFICATES_GROUP,
  SIGNER_NAMES,
  SubjectAccessReviewKind,
} from '@platform/api';
import { nodeClientRequestProblem, parseCertificateRequest } from '@platform/common';

import { type ControllerContext, type ControllerDefinition } from '../../controller';
import { hasTrueCondition, runCertificateController } from '../util/certificate-controller';

/** One kind of request the approver recognises, and the permission its requester needs. */
interface Recognizer {
  subresource: 'selfnodeclient' | 'nodeclient';
  recognize(csr: CertificateSigningRequest, commonName: string, isNodeClient: boolean): boolean;
  message: string;
}

const RECOGNIZERS: readonly Recognizer[] = [
  {
    subresource: 'selfnodeclient',
    recognize: (csr, cn, isNodeClient) => isNodeClient && csr.spec.username === cn,
    message: 'Auto approving self node agent client certificate after SubjectAccessReview.',
  },
  {
    subresource: 'nodeclient',
    recognize: (_csr, _cn, isNodeClient) => isNodeClient,
    message: 'Auto approving node agent client certificate after SubjectAccessReview.',
  },
];

async function run(ctx: ControllerContext): Promise<void> {
  const csrs = ctx.client.resource(CertificateSigningRequestKind);
  const reviews = ctx.client.resource(SubjectAccessReviewKind);
  const authorize = async (csr: CertificateSigningRequest, subresource: string): Promise<boolean> => {
    const sar = await reviews.create(
      {
        spec: {
          user: csr.spec.username ?? '',
          ...(csr.spec.uid ? { uid: csr.spec.uid } : {}),
          groups: csr.spec.groups ?? [],
          ...(csr.spec.extra ? { extra: csr.spec.extra } : {}),
          resourceAttributes: {
            group: CERTIFICATES_GROUP,
            resource: 'certificatesigningrequests',
            verb: 'create',
            subresource,
            version: '*',
          },
        },
      } as never,
      { signal: ctx.signal },
    );
    return !!(sar as { status?: { allowed?: boolean } }).status?.allowed;
  };
  const handle = async (csr: CertificateSigningRequest): Promise<void> => {
    if (hasTrueCondition(csr, 'Approved') || hasTrueCondition(csr, 'Denied')) return;
    const name = csr.metadata?.name ?? '';
    const request = parseCertificateRequest(Buffer.from(csr.spec.request ?? '', 'base64'));
    const isNodeClient =
      csr.spec.signerName === SIGNER_NAMES.apiServerClientNodeAgent &&
      nodeClientRequestProblem(request, csr.spec.usages ?? []) === undefined;
    const tried: string[] = [];
    for (const r of RECOGNIZERS) {
      if (!r.recognize(csr, request.commonName, isNodeClient)) continue;
      tried.push(r.subresource);
      if (!(await authorize(csr, r.subresource))) continue;
      (csr.status ??= {}).conditions = [
        ...(csr.status.conditions ?? []),
        { type: 'Approved', status: 'True', reason: 'AutoApproved', message: r.message },
      ];
      await csrs.updateSubresource(name, 'approval', csr, { signal: ctx.signal });
      ctx.logger.info('Approved a certificate request', { name, as: r.subresource });
      return;
    }
    if (tried.length) {
      // As 1.21's IgnorableError: retried with backoff (a role may be bound later), logged quietly.
      throw new Error(
        `recognized csr ${JSON.stringify(name)} as [${tried.join(' ')}] but subject access review was not approved`,
      );
    }
  };
  await runCertificateController(ctx, 'csrapproving', 5, handle);
}

/** The `csrapproving` controller. */
export const csrApprovingController: ControllerDefinition = {
  name: 'csrapproving',
  enabledByDefault: true,
  serviceAccount: 'certificate-controller',
  run: (ctx) => run(ctx),
};
