import { createPrivateKey, X509Certificate } from 'node:crypto';

import {
  createCertificateRequest,
  generateSelfSignedCertKey,
  nodeClientRequestProblem,
  nodeServingRequestProblem,
  parseCertificateRequest,
  signCertificateRequest,
} from '../index';

describe('certificate signing requests', () => {
  it('parses what it creates, checks the signature and finds tampering', async () => {
    const { csrPem } = await createCertificateRequest({
      commonName: 'system:node:n1',
      organizations: ['system:nodes'],
      dnsNames: ['n1.local'],
      ipAddresses: ['10.0.0.1'],
    });
    const r = parseCertificateRequest(csrPem);
    expect(r).toMatchObject({
      commonName: 'system:node:n1',
      organizations: ['system:nodes'],
      dnsNames: ['n1.local'],
      ipAddresses: ['10.0.0.1'],
    });
    expect(() => r.checkSignature()).not.toThrow();
    const der = Buffer.from(csrPem.split('\n').slice(1, -2).join(''), 'base64');
    der[der.length - 3] = der[der.length - 3]! ^ 0xff;
    const bad = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    expect(() => parseCertificateRequest(bad).checkSignature()).toThrow('x509: ECDSA verification failure');
  });

  it.each([
    ['not PEM', 'hello'],
    ['another block type', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'],
  ])('refuses %s with 1.21 words', (_name, pem) => {
    expect(() => parseCertificateRequest(pem)).toThrow('PEM block type must be CERTIFICATE REQUEST');
  });

  it('refuses DER that is not a request', () => {
    expect(() =>
      parseCertificateRequest('-----BEGIN CERTIFICATE REQUEST-----\nAAEC\n-----END CERTIFICATE REQUEST-----\n'),
    ).toThrow(/asn1/);
  });

  it('signs with an RSA CA: subject, names, usages, validity, not a CA', async () => {
    const pair = await generateSelfSignedCertKey({ host: 'ca' });
    // The first certificate of the chain is the one the key belongs to: it serves as the CA here.
    const caPem = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pair.certPem)![0];
    const { csrPem, keyPem } = await createCertificateRequest({ commonName: 'alice', organizations: ['devs'] });
    const now = new Date();
    const pem = await signCertificateRequest(
      { certPem: caPem, keyPem: pair.keyPem },
      {
        request: parseCertificateRequest(csrPem),
        usages: ['digital signature', 'client auth'],
        durationMs: 3600_000,
        now,
      },
    );
    const cert = new X509Certificate(pem);
    expect(cert.verify(new X509Certificate(caPem).publicKey)).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(keyPem))).toBe(true);
    expect(cert.subject.split('\n')).toEqual(['CN=alice', 'O=devs']);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(cert.ca).toBe(false);
    expect(Date.parse(cert.validFrom)).toBe(Math.floor(now.getTime() / 1000) * 1000 - 300_000);
    expect(Date.parse(cert.validTo)).toBe(Math.floor(now.getTime() / 1000) * 1000 + 3600_000);
    await expect(
      signCertificateRequest(
        { certPem: caPem, keyPem: pair.keyPem },
        { request: parseCertificateRequest(csrPem), usages: ['flying'], durationMs: 1000 },
      ),
    ).rejects.toThrow('unrecognized usage values: ["flying"]');
  });

  it('tells node client and serving requests apart, with 1.21 reasons', async () => {
    const client = parseCertificateRequest(
      (await createCertificateRequest({ commonName: 'system:node:n1', organizations: ['system:nodes'] })).csrPem,
    );
    const serving = parseCertificateRequest(
      (
        await createCertificateRequest({
          commonName: 'system:node:n1',
          organizations: ['system:nodes'],
          dnsNames: ['n1'],
        })
      ).csrPem,
    );
    const clientUsages = ['digital signature', 'key encipherment', 'client auth'];
    const servingUsages = ['digital signature', 'server auth'];
    expect(nodeClientRequestProblem(client, clientUsages)).toBeUndefined();
    expect(nodeClientRequestProblem(serving, clientUsages)).toBe('DNS subjectAltNames are not allowed');
    expect(nodeClientRequestProblem(client, servingUsages)).toBe(
      'usages did not match [client auth digital signature key encipherment]',
    );
    expect(nodeServingRequestProblem(serving, servingUsages)).toBeUndefined();
    expect(nodeServingRequestProblem(client, servingUsages)).toBe('DNS or IP subjectAltName is required');
    const other = parseCertificateRequest((await createCertificateRequest({ commonName: 'system:node:n1' })).csrPem);
    expect(nodeClientRequestProblem(other, clientUsages)).toBe('subject organization is not system:nodes');
  });
});
