/**
 * Serving certificates: load a certificate/key pair from PEM files, or generate a self-signed CA and a serving
 * certificate into `--cert-dir` and reuse them on restart, as Kubernetes' `MaybeDefaultWithSelfSignedCerts` does
 * (files `<pairName>.crt` — serving certificate then CA certificate — and `<pairName>.key`, RSA 2048, one year).
 */
import { X509Certificate, createPrivateKey, KeyObject, webcrypto, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';

import type * as X509 from '@peculiar/x509';

/**
 * @peculiar/x509, loaded on first use: it (with tsyringe and the Reflect polyfill it needs first) is a quarter of a
 * second of every daemon's start, and only a first start that generates certificates needs it.
 */
async function x509Lib(): Promise<typeof X509> {
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  x509.cryptoProvider.set(webcrypto as unknown as X509Crypto);
  return x509;
}

/** A loaded certificate chain and its private key, ready for Node's `tls`. */
export interface CertKeyPair {
  /** PEM of the leaf certificate followed by any intermediates/CA. */
  certPem: string;
  /** PEM of the private key. */
  keyPem: string;
  /** The parsed leaf certificate. */
  leaf: X509Certificate;
  /** Where it came from, for messages (`/path/a.crt`). */
  source: string;
}

/** A certificate problem; the message names the file and what is wrong. */
export class CertificateError extends Error {
  readonly isCertificateError = true;
  constructor(message: string) {
    super(message);
    this.name = 'CertificateError';
  }
}

/** Brand check for {@link CertificateError}. */
export function isCertificateError(err: unknown): err is CertificateError {
  return (
    typeof err === 'object' && err !== null && (err as { isCertificateError?: unknown }).isCertificateError === true
  );
}

/** Parses PEM text holding a chain and a key; throws {@link CertificateError} naming `source` on any mismatch. */
export function parseCertKeyPair(certPem: string, keyPem: string, source: string, keySource = source): CertKeyPair {
  const first = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(certPem);
  if (!first) throw new CertificateError(`${source}: no PEM certificate found`);
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(first[0]);
  } catch (err) {
    throw new CertificateError(`${source}: invalid certificate: ${(err as Error).message}`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch (err) {
    throw new CertificateError(`${keySource}: invalid private key: ${(err as Error).message}`);
  }
  if (!leaf.checkPrivateKey(key)) {
    throw new CertificateError(`${keySource}: private key does not match the certificate in ${source}`);
  }
  return { certPem, keyPem, leaf, source };
}

/** Reads and checks a certificate file and its key file. */
export async function loadCertKeyPair(certFile: string, keyFile: string): Promise<CertKeyPair> {
  const read = async (file: string, what: string): Promise<string> => {
    try {
      return await readFile(file, 'utf8');
    } catch (err) {
      throw new CertificateError(
        `unable to read ${what} ${JSON.stringify(file)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
  };
  // One after the other, so that the error names the certificate file first, deterministically.
  const certPem = await read(certFile, 'certificate file');
  const keyPem = await read(keyFile, 'key file');
  return parseCertKeyPair(certPem, keyPem, certFile, keyFile);
}

/** What a generated serving certificate is valid for. */
export interface SelfSignedOptions {
  /** The public address (IP or DNS name) the certificate is issued for; also its common name. */
  host: string;
  alternateIPs?: readonly string[];
  alternateDNS?: readonly string[];
  /** Injected clock for validity dates and the CN timestamp. */
  now?: () => Date;
}

// @peculiar/x509 types WebCrypto with the DOM lib's names; Node's webcrypto objects are those at runtime.
type X509Crypto = Parameters<typeof X509.cryptoProvider.set>[0];
type X509KeyPair = X509.X509CertificateCreateSelfSignedParams['keys'];
type X509Key = X509.X509CertificateCreateWithKeyParams['signingKey'];

const RSA = {
  name: 'RSASSA-PKCS1-v1_5',
  modulusLength: 2048,
  publicExponent: new Uint8Array([1, 0, 1]),
  hash: 'SHA-256',
};
const YEAR_MS = 365 * 24 * 3600 * 1000;

async function keyPemOf(key: webcrypto.CryptoKey): Promise<string> {
  return KeyObject.from(key).export({ type: 'pkcs1', format: 'pem' }) as string;
}

function serial(): string {
  const b = randomBytes(16);
  b[0] = b[0]! & 0x7f; // positive
  return b.toString('hex');
}

/**
 * Generates a self-signed CA and a serving certificate it signs, for `host` plus the alternate names, `localhost`
 * and `127.0.0.1`. Returns the chain PEM (serving, then CA) and the serving key PEM.
 */
export async function generateSelfSignedCertKey(o: SelfSignedOptions): Promise<{ certPem: string; keyPem: string }> {
  const subtle = webcrypto.subtle;
  const x509 = await x509Lib();
  const now = (o.now ?? (() => new Date()))();
  const stamp = Math.floor(now.getTime() / 1000);
  const notBefore = new Date(now.getTime() - 60_000);
  const notAfter = new Date(now.getTime() + YEAR_MS);

  const caKeys = (await subtle.generateKey(RSA, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const caName = `CN=${o.host}-ca@${stamp}`;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: caName,
    notBefore,
    notAfter,
    keys: caKeys as unknown as X509KeyPair,
    signingAlgorithm: RSA,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyEncipherment | x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey as unknown as X509Key),
    ],
  });

  const ips = new Set<string>();
  const dns = new Set<string>();
  if (isIP(o.host)) ips.add(o.host);
  else dns.add(o.host);
  for (const ip of o.alternateIPs ?? []) ips.add(ip);
  for (const d of o.alternateDNS ?? []) dns.add(d);
  dns.add('localhost');
  ips.add('127.0.0.1');
  const names: X509.JsonGeneralName[] = [
    ...[...dns].map((value) => ({ type: 'dns' as const, value })),
    ...[...ips].map((value) => ({ type: 'ip' as const, value })),
  ];

  const keys = (await subtle.generateKey(RSA, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${o.host}@${stamp}`,
    issuer: caName,
    notBefore,
    notAfter,
    publicKey: keys.publicKey as unknown as X509Key,
    signingKey: caKeys.privateKey as unknown as X509Key,
    signingAlgorithm: RSA,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyEncipherment | x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey as unknown as X509Key),
    ],
  });
  return {
    certPem: `${cert.toString('pem')}\n${ca.toString('pem')}\n`,
    keyPem: await keyPemOf(keys.privateKey),
  };
}

/** A certificate and its private key, in PEM. */
export interface PemPair {
  certPem: string;
  keyPem: string;
}

/** What an issued certificate is for: its subject (CN = user, O = groups) and, for a server, its names. */
export interface IssueOptions {
  commonName: string;
  organizations?: readonly string[];
  usage: 'client' | 'server';
  dns?: readonly string[];
  ips?: readonly string[];
  /** Validity from now (default one year). */
  validityMs?: number;
  now?: () => Date;
}

// ECDSA P-256: a key pair takes a millisecond where RSA 2048 takes a tenth of a second or more on a busy machine.
const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

function escapeDn(v: string): string {
  return v.replace(/([,+"\\<>;=#])/g, '\\$1');
}

/** A new certificate authority (ECDSA P-256, self-signed, `name` as its common name) that {@link issueCertificate} uses. */
export async function generateCertificateAuthority(name: string, validityMs = 10 * YEAR_MS): Promise<PemPair> {
  const x509 = await x509Lib();
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const now = Date.now();
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${escapeDn(name)}`,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + validityMs),
    keys: keys as unknown as X509KeyPair,
    signingAlgorithm: EC,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey as unknown as X509Key),
    ],
  });
  return {
    certPem: `${ca.toString('pem')}\n`,
    keyPem: KeyObject.from(keys.privateKey).export({ type: 'pkcs8', format: 'pem' }) as string,
  };
}

/**
 * A client or serving certificate signed by `ca` (a pair from {@link generateCertificateAuthority}); its key is a new
 * ECDSA P-256 key. Throws {@link CertificateError} when the CA's key is not an ECDSA P-256 key.
 */
export async function issueCertificate(ca: PemPair, o: IssueOptions): Promise<PemPair> {
  const x509 = await x509Lib();
  const caCert = new x509.X509Certificate(ca.certPem);
  let signingKey: webcrypto.CryptoKey;
  try {
    const der = createPrivateKey(ca.keyPem).export({ type: 'pkcs8', format: 'der' });
    signingKey = await webcrypto.subtle.importKey('pkcs8', der, EC, false, ['sign']);
  } catch (err) {
    throw new CertificateError(`the CA's key is not an ECDSA P-256 key: ${(err as Error).message}`);
  }
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const now = (o.now ?? (() => new Date()))().getTime();
  const extensions: X509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension([
      o.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth,
    ]),
    await x509.AuthorityKeyIdentifierExtension.create(caCert),
  ];
  if (o.dns?.length || o.ips?.length)
    extensions.push(
      new x509.SubjectAlternativeNameExtension([
        ...(o.dns ?? []).map((value) => ({ type: 'dns' as const, value })),
        ...(o.ips ?? []).map((value) => ({ type: 'ip' as const, value })),
      ]),
    );
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: [`CN=${escapeDn(o.commonName)}`, ...(o.organizations ?? []).map((g) => `O=${escapeDn(g)}`)].join(', '),
    issuer: caCert.subject,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + (o.validityMs ?? YEAR_MS)),
    publicKey: keys.publicKey as unknown as X509Key,
    signingKey: signingKey as unknown as X509Key,
    signingAlgorithm: EC,
    extensions,
  });
  return {
    certPem: `${cert.toString('pem')}\n`,
    keyPem: KeyObject.from(keys.privateKey).export({ type: 'pkcs8', format: 'pem' }) as string,
  };
}

/** Where the generated pair lives: `<certDir>/<pairName>.crt` and `.key`. */
export function selfSignedPaths(certDir: string, pairName: string): { certFile: string; keyFile: string } {
  return { certFile: join(certDir, `${pairName}.crt`), keyFile: join(certDir, `${pairName}.key`) };
}

async function writeAtomic(file: string, data: string, mode: number): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}`;
  await writeFile(tmp, data, { mode });
  await rename(tmp, file);
}

/**
 * Loads `<certDir>/<pairName>.crt/.key` when both exist (a restart reuses them); otherwise generates them (key
 * mode 0600). A stored pair whose serving certificate has expired is replaced (Kubernetes would serve it and fail
 * every handshake a year later). `generated` says which happened. Throws {@link CertificateError} when only one of the two files
 * exists, or when they cannot be read or written.
 */
export async function ensureSelfSignedCertKey(
  certDir: string,
  pairName: string,
  o: SelfSignedOptions,
): Promise<CertKeyPair & { generated: boolean }> {
  if (certDir === '')
    throw new CertificateError('--cert-dir is empty and no --tls-cert-file/--tls-private-key-file were given');
  const { certFile, keyFile } = selfSignedPaths(certDir, pairName);
  const hasCert = existsSync(certFile);
  const hasKey = existsSync(keyFile);
  if (hasCert && hasKey) {
    const existing = await loadCertKeyPair(certFile, keyFile);
    const now = (o.now ?? (() => new Date()))().getTime();
    if (new Date(existing.leaf.validTo).getTime() > now) return { ...existing, generated: false };
  }
  if (hasCert !== hasKey) {
    // A half pair is an operator's mistake or a crash between the two writes: say so rather than guess.
    throw new CertificateError(
      `found ${hasCert ? certFile : keyFile} but not ${hasCert ? keyFile : certFile}: remove it to have a new pair generated, or provide both`,
    );
  }
  const { certPem, keyPem } = await generateSelfSignedCertKey(o);
  try {
    await mkdir(certDir, { recursive: true, mode: 0o755 });
    await writeAtomic(keyFile, keyPem, 0o600);
    await writeAtomic(certFile, certPem, 0o644);
  } catch (err) {
    throw new CertificateError(
      `unable to write self-signed certificate to ${JSON.stringify(certDir)}: ${(err as Error).message}`,
    );
  }
  return { ...parseCertKeyPair(certPem, keyPem, certFile, keyFile), generated: true };
}
