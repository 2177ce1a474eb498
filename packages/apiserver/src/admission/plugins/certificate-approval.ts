/**
 * CertificateApproval (model: Kubernetes 1.21 `plugin/pkg/admission/certificates/approval`): an update of
 * `certificatesigningrequests/approval` needs the `approve` verb on the `signers` resource named after the request's
 * signer (or `<domain>/*`), whatever the requester may do to the request itself.
 */
import { type CertificateSigningRequest, CERTIFICATES_GROUP } from '@platform/api';

import { type Authorizer } from '../../auth/authorizer';
import {
  type AdmissionAttributes,
  type AdmissionPlugin,
  admissionForbidden,
  isResource,
  type Operation,
  type PluginFactory,
} from '../interfaces';

export const NAME = 'CertificateApproval';

/**
 * Whether `user` may `verb` the signer `signerName`: first the exact name, then the wildcard of its domain
 * (1.21 `IsAuthorizedForSignerName`). An authorizer error counts as no.
 */
export async function isAuthorizedForSignerName(
  authorizer: Authorizer | undefined,
  a: AdmissionAttributes,
  verb: string,
  signerName: string,
): Promise<boolean> {
  if (!authorizer) return true;
  if (!a.user) return false;
  const attributes = (name: string): Parameters<Authorizer['authorize']>[0] => ({
    user: a.user!,
    verb,
    resourceRequest: true,
    namespace: '',
    apiGroup: CERTIFICATES_GROUP,
    apiVersion: '*',
    resource: 'signers',
    subresource: '',
    name,
    path: '',
  });
  for (const name of [signerName, `${signerName.split('/')[0]}/*`]) {
    try {
      if ((await authorizer.authorize(attributes(name))).decision === 'allow') return true;
    } catch {
      // As 1.21: an authorizer error is logged there and means no.
    }
  }
  return false;
}

/** The CertificateApproval plugin. */
export class CertificateApprovalPlugin implements AdmissionPlugin {
  readonly name = NAME;

  constructor(private readonly authorizer: Authorizer | undefined) {}

  handles(op: Operation): boolean {
    return op === 'UPDATE';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isResource(a, CERTIFICATES_GROUP, 'certificatesigningrequests', 'approval')) return;
    const signerName = (a.object as CertificateSigningRequest | undefined)?.spec?.signerName ?? '';
    if (!(await isAuthorizedForSignerName(this.authorizer, a, 'approve', signerName))) {
      throw admissionForbidden(
        a,
        `user not permitted to approve requests with signerName ${JSON.stringify(signerName)}`,
      );
    }
  }
}

export const factory: PluginFactory = (c) => new CertificateApprovalPlugin(c.authorizer);
