/**
 * CertificateSigning (model: Kubernetes 1.21 `plugin/pkg/admission/certificates/signing`): an update of
 * `certificatesigningrequests/status` that changes `status.certificate` needs the `sign` verb on the `signers`
 * resource named after the request's signer (or `<domain>/*`).
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
import { isAuthorizedForSignerName } from './certificate-approval';

export const NAME = 'CertificateSigning';

/** The CertificateSigning plugin. */
export class CertificateSigningPlugin implements AdmissionPlugin {
  readonly name = NAME;

  constructor(private readonly authorizer: Authorizer | undefined) {}

  handles(op: Operation): boolean {
    return op === 'UPDATE';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isResource(a, CERTIFICATES_GROUP, 'certificatesigningrequests', 'status')) return;
    const old = a.oldObject as CertificateSigningRequest | undefined;
    const csr = a.object as CertificateSigningRequest | undefined;
    if ((old?.status?.certificate ?? '') === (csr?.status?.certificate ?? '')) return;
    const signerName = old?.spec?.signerName ?? '';
    if (!(await isAuthorizedForSignerName(this.authorizer, a, 'sign', signerName))) {
      throw admissionForbidden(a, `user not permitted to sign requests with signerName ${JSON.stringify(signerName)}`);
    }
  }
}

export const factory: PluginFactory = (c) => new CertificateSigningPlugin(c.authorizer);
