/**
 * Test certificates: a CA, certificates it signs for clients (CN = user, O = groups) or servers, with the
 * validity window and usages a test wants. ECDSA P-256 keys, so making many is quick.
 */
import { KeyObject, randomBytes, webcrypto } from 'node:crypto';

// @peculiar/x509 needs the reflect polyfill loaded first (tsyringe).
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

type X509Crypto = Parameters<typeof x509.cryptoProvider.set>[0];
type X509Key = x509.X509CertificateCreateWithKeyParams['signingKey'];
type X509KeyPair = x509.X509CertificateCreateSelfSignedParams['keys'];

const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY = 24 * 3600 * 1000;

/** A certificate with its key, in PEM. */
export interface TestCert {
  certPem: string;
  keyPem: string;
}

/** A CA that signs test certificates. */
export interface TestCA extends TestCert {
  sign(o: {
    cn: string;
    orgs?: string[];
    notBefore?: Date;
    notAfter?: Date;
    usage?: 'client' | 'server';
    dns?: string[];
    ips?: string[];
    ca?: boolean;
  }): Promise<TestCert & TestCA>;
}

function serial(): string {
  const b = randomBytes(12);
  b[0] = b[0]! & 0x7f;
  return b.toString('hex');
}

function escapeDn(v: string): string {
  return v.replace(/([,+"\\<>;=])/g, '\\$1');
}

async function pemOfKey(key: webcrypto.CryptoKey): Promise<string> {
  return KeyObject.from(key).export({ type: 'pkcs8', format: 'pem' }) as string;
}

async function wrap(
  cert: x509.X509Certificate,
  keys: webcrypto.CryptoKeyPair,
  name: string,
): Promise<TestCA & TestCert> {
  const certPem = cert.toString('pem') + '\n';
  const keyPem = await pemOfKey(keys.privateKey);
  return {
    certPem,
    keyPem,
    async sign(o) {
      const subKeys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
      const subject = [`CN=${escapeDn(o.cn)}`, ...(o.orgs ?? []).map((g) => `O=${escapeDn(g)}`)].join(', ');
      const now = Date.now();
      const extensions: x509.Extension[] = [
        new x509.BasicConstraintsExtension(!!o.ca, undefined, true),
        new x509.KeyUsagesExtension(
          o.ca
            ? x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature
            : x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
          true,
        ),
      ];
      if (!o.ca)
        extensions.push(
          new x509.ExtendedKeyUsageExtension([
            o.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth,
          ]),
        );
      if (o.dns || o.ips)
        extensions.push(
          new x509.SubjectAlternativeNameExtension([
            ...(o.dns ?? []).map((value) => ({ type: 'dns' as const, value })),
            ...(o.ips ?? []).map((value) => ({ type: 'ip' as const, value })),
          ]),
        );
      const cert = await x509.X509CertificateGenerator.create({
        serialNumber: serial(),
        subject,
        issuer: name,
        notBefore: o.notBefore ?? new Date(now - 60_000),
        notAfter: o.notAfter ?? new Date(now + DAY),
        publicKey: subKeys.publicKey as unknown as X509Key,
        signingKey: keys.privateKey as unknown as X509Key,
        signingAlgorithm: EC,
        extensions,
      });
      return wrap(cert, subKeys, subject);
    },
  };
}

/** A new self-signed CA named `name`. */
export async function testCA(name: string): Promise<TestCA> {
  x509.cryptoProvider.set(webcrypto as unknown as X509Crypto);
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const dn = `CN=${escapeDn(name)}`;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: dn,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 30 * DAY),
    keys: keys as unknown as X509KeyPair,
    signingAlgorithm: EC,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true),
    ],
  });
  return wrap(cert, keys, dn);
}
