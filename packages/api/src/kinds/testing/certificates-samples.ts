/** Samples of the certificates.platform kinds for the kind tests (every field set once). */
const META = { name: 'sample', uid: '0d2b3c4e-5f60-4a7b-8c9d-0e1f2a3b4c5d', resourceVersion: '42' };

/** Any bytes do for the schema tests: the API server's validation parses the request, not the scheme. */
const REQUEST = Buffer.from('-----BEGIN CERTIFICATE REQUEST-----\nAAEC\n-----END CERTIFICATE REQUEST-----\n').toString(
  'base64',
);

function csr(signerName: string): Record<string, unknown> {
  return {
    metadata: META,
    spec: {
      request: REQUEST,
      signerName,
      usages: ['digital signature', 'key encipherment', 'client auth'],
      username: 'system:bootstrap:abcdef',
      uid: 'u-1',
      groups: ['system:bootstrappers', 'system:authenticated'],
      extra: { 'authentication.platform/credential-id': ['token-1'] },
    },
    status: {
      conditions: [
        {
          type: 'Approved',
          status: 'True',
          reason: 'AutoApproved',
          message: 'Auto approving node agent client certificate after SubjectAccessReview.',
          lastUpdateTime: '2021-04-08T12:00:00Z',
          lastTransitionTime: '2021-04-08T12:00:00Z',
        },
      ],
      certificate: Buffer.from('-----BEGIN CERTIFICATE-----\nAAEC\n-----END CERTIFICATE-----\n').toString('base64'),
    },
  };
}

/** Keyed like SAMPLES: `<apiVersion>/<kind>`. */
export const CERTIFICATES_SAMPLES: Record<string, Record<string, unknown>> = {
  'certificates.platform/v1/CertificateSigningRequest': csr('platform.io/apiserver-client-node-agent'),
  'certificates.platform/v1beta1/CertificateSigningRequest': csr('platform.io/legacy-unknown'),
};
