/**
 * CertificateSubjectRestriction (model: Kubernetes 1.21 `plugin/pkg/admission/certificates/subjectrestriction`):
 * no request for the API server client signer may ask for the `system:masters` group, which bypasses every
 * authorization.
 */
import { type CertificateSigningRequest, CERTIFICATES_GROUP, SIGNER_NAMES } from '@platform/api';
import { parseCertificateRequest } from '@platform/common';

import {
  type AdmissionAttributes,
  type AdmissionPlugin,
  admissionForbidden,
  isResource,
  type Operation,
  type PluginFactory,
} from '../interfaces';

export const NAME = 'CertificateSubjectRestriction';

/** The CertificateSubjectRestriction plugin. */
export class CertificateSubjectRestrictionPlugin implements AdmissionPlugin {
  readonly name = NAME;

  handles(op: Operation): boolean {
    return op === 'CREATE';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isResource(a, CERTIFICATES_GROUP, 'certificatesigningrequests')) return;
    const csr = a.object as CertificateSigningRequest | undefined;
    if (csr?.spec?.signerName !== SIGNER_NAMES.apiServerClient) return;
    let organizations: string[];
    try {
      organizations = parseCertificateRequest(Buffer.from(csr.spec.request ?? '', 'base64')).organizations;
    } catch (err) {
      throw admissionForbidden(a, `failed to parse CSR: ${(err as Error).message}`);
    }
    if (organizations.includes('system:masters')) {
      throw admissionForbidden(
        a,
        `use of ${SIGNER_NAMES.apiServerClient} signer with system:masters group is not allowed`,
      );
    }
  }
}

export const factory: PluginFactory = () => new CertificateSubjectRestrictionPlugin();
