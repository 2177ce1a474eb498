/**
 * PKCS#10 certificate signing requests: parse and check one (the API server's validation of
 * CertificateSigningRequests, the signers and approvers of the controller manager), sign one with a CA (model:
 * Kubernetes 1.21 `pkg/controller/certificates/authority`), and make one (the node agent's client certificate
 * bootstrap). Errors carry the words of Go's `crypto/x509` and of `certificates.ParseCSR`, which 1.21's messages quote.
 */
import { createPrivateKey, createPublicKey, type KeyObject, randomBytes, verify, webcrypto } from 'node:crypto';

import type * as X509 from '@peculiar/x509';

type X509Crypto = Parameters<typeof X509.cryptoProvider.set>[0];
type X509Key = X509.X509CertificateCreateWithKeyParams['signingKey'];

let loaded: typeof X509 | undefined;

/**
 * @peculiar/x509, loaded on first use: with tsyringe and the Reflect metadata polyfill it needs loaded first, it is
 * a tenth of every daemon's start, and most daemons never handle a CSR. Synchronous, for `parseCertificateRequest`.
 */
function x509Lib(): typeof X509 {
  if (!loaded) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('reflect-metadata');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    loaded = require('@peculiar/x509') as typeof X509;
    loaded.cryptoProvider.set(webcrypto as unknown as X509Crypto);
  }
  return loaded;
}

/** A CSR that does not parse or whose signature does not verify; the message is what 1.21 says. */
export class CertificateRequestError extends Error {
  readonly isCertificateRequestError = true;
  constructor(message: string) {
    super(message);
    this.name = 'CertificateRequestError';
  }
}

/** What a parsed certificate signing request holds (the parts the signers and approvers look at). */
export interface CertificateRequest {
  /** The subject's common name ('' when none). */
  commonName: string;
  /** The subject's organizations (O), in order. */
  organizations: string[];
  dnsNames: string[];
  ipAddresses: string[];
  emailAddresses: string[];
  uris: string[];
  /** The subject in RFC 4514 form (`CN=system:node:a, O=system:nodes`). */
  subject: string;
  /** The DER of the subject Name, copied as is into a signed certificate. */
  subjectDer: Uint8Array;
  /** The subject public key info (DER). */
  publicKeyDer: Uint8Array;
  /** Throws {@link CertificateRequestError} when the request's self-signature does not verify. */
  checkSignature(): void;
}

/** One DER element: its tag and where its contents start and end. */
interface Tlv {
  tag: number;
  start: number;
  end: number;
}

function readTlv(der: Uint8Array, offset: number): Tlv {
  if (offset + 2 > der.length) throw new CertificateRequestError('asn1: syntax error: data truncated');
  const tag = der[offset]!;
  let len = der[offset + 1]!;
  let start = offset + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || start + n > der.length) throw new CertificateRequestError('asn1: syntax error: bad length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + der[start + i]!;
    start += n;
  }
  const end = start + len;
  if (end > der.length) throw new CertificateRequestError('asn1: syntax error: data truncated');
  return { tag, start, end };
}

function oidString(bytes: Uint8Array): string {
  const parts: number[] = [];
  let v = 0;
  for (const b of bytes) {
    v = v * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      if (parts.length === 0) parts.push(v < 80 ? Math.floor(v / 40) : 2, v < 80 ? v % 40 : v - 80);
      else parts.push(v);
      v = 0;
    }
  }
  return parts.join('.');
}

/** Signature algorithm OIDs → the hash Node's `verify` takes (null: the key type decides, Ed25519). */
const SIGNATURE_HASHES: Record<string, { hash: string | null; failure: string }> = {
  '1.2.840.113549.1.1.5': { hash: 'sha1', failure: 'crypto/rsa: verification error' },
  '1.2.840.113549.1.1.11': { hash: 'sha256', failure: 'crypto/rsa: verification error' },
  '1.2.840.113549.1.1.12': { hash: 'sha384', failure: 'crypto/rsa: verification error' },
  '1.2.840.113549.1.1.13': { hash: 'sha512', failure: 'crypto/rsa: verification error' },
  '1.2.840.10045.4.1': { hash: 'sha1', failure: 'x509: ECDSA verification failure' },
  '1.2.840.10045.4.3.2': { hash: 'sha256', failure: 'x509: ECDSA verification failure' },
  '1.2.840.10045.4.3.3': { hash: 'sha384', failure: 'x509: ECDSA verification failure' },
  '1.2.840.10045.4.3.4': { hash: 'sha512', failure: 'x509: ECDSA verification failure' },
  '1.3.101.112': { hash: null, failure: 'x509: Ed25519 verification failure' },
};

const SAN_OID = '2.5.29.17';

/** The DER of the first PEM block of type `type`, or undefined (Go's `pem.Decode` then a type check). */
function pemBlock(pem: string, type: string): Uint8Array | undefined {
  const m = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/.exec(pem);
  if (!m || m[1] !== type) return undefined;
  // Headers (`Key: value` lines) are not allowed in the blocks we read.
  if (/^[^\s:]+:/m.test(m[2]!)) return undefined;
  return new Uint8Array(Buffer.from(m[2]!.replace(/\s+/g, ''), 'base64'));
}

/**
 * Parses a PEM-encoded PKCS#10 request (`certificates.ParseCSR`): the first PEM block must be a `CERTIFICATE
 * REQUEST`. Throws {@link CertificateRequestError}. The signature is not checked here: call `checkSignature()`.
 */
export function parseCertificateRequest(pem: string | Uint8Array): CertificateRequest {
  const x509 = x509Lib();
  const text = typeof pem === 'string' ? pem : Buffer.from(pem).toString('latin1');
  const der = pemBlock(text, 'CERTIFICATE REQUEST');
  if (!der) throw new CertificateRequestError('PEM block type must be CERTIFICATE REQUEST');
  let csr: X509.Pkcs10CertificateRequest;
  let outer: Tlv, info: Tlv, alg: Tlv, sig: Tlv;
  try {
    outer = readTlv(der, 0);
    info = readTlv(der, outer.start);
    alg = readTlv(der, info.end);
    sig = readTlv(der, alg.end);
    if (outer.tag !== 0x30 || info.tag !== 0x30 || alg.tag !== 0x30 || sig.tag !== 0x03) {
      throw new CertificateRequestError('asn1: structure error: not a certificate request');
    }
    csr = new x509.Pkcs10CertificateRequest(der);
  } catch (err) {
    if (err instanceof CertificateRequestError) throw err;
    throw new CertificateRequestError(`asn1: structure error: ${(err as Error).message}`);
  }
  // The signed bytes are the whole request info element, its tag and length included.
  const infoBytes = der.subarray(outer.start, info.end);
  const oid = readTlv(der, alg.start);
  const algOid = oidString(der.subarray(oid.start, oid.end));
  const signature = der.subarray(sig.start + 1, sig.end);
  const publicKeyDer = new Uint8Array(csr.publicKey.rawData);
  // The subject Name is the second element of the request info (after the version).
  const version = readTlv(der, info.start);
  const subjectTlv = readTlv(der, version.end);
  const subjectDer = der.subarray(version.end, subjectTlv.end);
  const sanExt = csr.extensions.find((e) => e.type === SAN_OID);
  const names = sanExt ? new x509.SubjectAlternativeNameExtension(sanExt.rawData).names.items : [];
  const of = (type: string): string[] => names.filter((n) => n.type === type).map((n) => n.value);
  const cns = csr.subjectName.getField('CN');
  return {
    commonName: cns[cns.length - 1] ?? '',
    organizations: csr.subjectName.getField('O'),
    dnsNames: of('dns'),
    ipAddresses: of('ip'),
    emailAddresses: of('email'),
    uris: of('url'),
    subject: csr.subject,
    subjectDer,
    publicKeyDer,
    checkSignature() {
      const how = SIGNATURE_HASHES[algOid];
      if (!how) throw new CertificateRequestError('x509: cannot verify signature: algorithm unimplemented');
      let key: KeyObject;
      try {
        key = createPublicKey({ key: Buffer.from(publicKeyDer), format: 'der', type: 'spki' });
      } catch (err) {
        throw new CertificateRequestError(`x509: cannot parse public key: ${(err as Error).message}`);
      }
      let ok = false;
      try {
        ok = verify(how.hash, infoBytes, key, signature);
      } catch {
        ok = false;
      }
      if (!ok) throw new CertificateRequestError(how.failure);
    },
  };
}

/** Key usages (`spec.usages` values) that are X.509 key usage bits (1.21 `keyUsageDict`). */
const KEY_USAGES: Record<string, keyof typeof X509.KeyUsageFlags> = {
  signing: 'digitalSignature',
  'digital signature': 'digitalSignature',
  'content commitment': 'nonRepudiation',
  'key encipherment': 'keyEncipherment',
  'key agreement': 'keyAgreement',
  'data encipherment': 'dataEncipherment',
  'cert sign': 'keyCertSign',
  'crl sign': 'cRLSign',
  'encipher only': 'encipherOnly',
  'decipher only': 'decipherOnly',
};

/** Usages that are extended key usages (1.21 `extKeyUsageDict`), by OID. */
const EXT_KEY_USAGES: Record<string, string> = {
  any: '2.5.29.37.0',
  'server auth': '1.3.6.1.5.5.7.3.1',
  'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4',
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

/** Every usage value a CertificateSigningRequest may name. */
export const KNOWN_KEY_USAGES: readonly string[] = [...Object.keys(KEY_USAGES), ...Object.keys(EXT_KEY_USAGES)];

/** A CA that signs requests: its certificate and private key, in PEM. */
export interface SigningAuthority {
  certPem: string;
  keyPem: string;
}

/** How long certificates are backdated, for clock skew (1.21's signer: 5 minutes). */
const BACKDATE_MS = 5 * 60 * 1000;

function signingAlgorithm(key: KeyObject): { import: object; sign: object } {
  if (key.asymmetricKeyType === 'rsa') {
    const alg = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    return { import: alg, sign: alg };
  }
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    const named =
      curve === 'prime256v1' ? 'P-256' : curve === 'secp384r1' ? 'P-384' : curve === 'secp521r1' ? 'P-521' : '';
    if (!named) throw new CertificateRequestError(`unsupported elliptic curve of the CA key: ${curve ?? 'unknown'}`);
    const hash = named === 'P-256' ? 'SHA-256' : named === 'P-384' ? 'SHA-384' : 'SHA-512';
    return { import: { name: 'ECDSA', namedCurve: named }, sign: { name: 'ECDSA', hash } };
  }
  throw new CertificateRequestError(`unsupported CA key type: ${key.asymmetricKeyType ?? 'unknown'}`);
}

/** What to sign: the request, its usages, and for how long. */
export interface SignOptions {
  request: CertificateRequest;
  /** `spec.usages` values; an unknown one fails the signing. */
  usages: readonly string[];
  /** The validity (`--cluster-signing-duration`); capped at the CA certificate's own expiry. */
  durationMs: number;
  now?: Date;
}

/**
 * Signs a request with `ca` (1.21 `CertificateAuthority.Sign` with a `PermissiveSigningPolicy`): the request's
 * subject, names and public key; the usages asked for; not a CA; valid from 5 minutes ago for `durationMs`, but
 * never past the CA's own expiry. Resolves to the certificate's PEM. Throws {@link CertificateRequestError}.
 */
export async function signCertificateRequest(ca: SigningAuthority, o: SignOptions): Promise<string> {
  const x509 = x509Lib();
  o.request.checkSignature();
  const keyUsages = o.usages.filter((u) => u in KEY_USAGES);
  const extUsages = o.usages.filter((u) => u in EXT_KEY_USAGES);
  const unknown = o.usages.filter((u) => !(u in KEY_USAGES) && !(u in EXT_KEY_USAGES));
  if (unknown.length) throw new CertificateRequestError(`unrecognized usage values: ${JSON.stringify(unknown)}`);
  const caCert = new x509.X509Certificate(ca.certPem);
  const now = o.now ?? new Date();
  if (now.getTime() >= caCert.notAfter.getTime()) {
    throw new CertificateRequestError('refusing to sign a certificate that expired in the past');
  }
  const notAfter = new Date(Math.min(now.getTime() + o.durationMs, caCert.notAfter.getTime()));
  const caKey = createPrivateKey(ca.keyPem);
  const alg = signingAlgorithm(caKey);
  const signingKey = await webcrypto.subtle.importKey(
    'pkcs8',
    caKey.export({ format: 'der', type: 'pkcs8' }),
    alg.import as Parameters<typeof webcrypto.subtle.importKey>[2],
    false,
    ['sign'],
  );
  const r = o.request;
  const names: X509.JsonGeneralName[] = [
    ...r.dnsNames.map((value) => ({ type: 'dns' as const, value })),
    ...r.emailAddresses.map((value) => ({ type: 'email' as const, value })),
    ...r.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
    ...r.uris.map((value) => ({ type: 'url' as const, value })),
  ];
  const extensions: X509.Extension[] = [];
  const bits = keyUsages.reduce((acc, u) => acc | x509.KeyUsageFlags[KEY_USAGES[u]!], 0);
  if (bits) extensions.push(new x509.KeyUsagesExtension(bits, true));
  if (extUsages.length)
    extensions.push(new x509.ExtendedKeyUsageExtension([...new Set(extUsages.map((u) => EXT_KEY_USAGES[u]!))]));
  extensions.push(new x509.BasicConstraintsExtension(false, undefined, true));
  const caSki = caCert.getExtension(x509.SubjectKeyIdentifierExtension);
  if (caSki) extensions.push(new x509.AuthorityKeyIdentifierExtension(caSki.keyId));
  if (names.length) extensions.push(new x509.SubjectAlternativeNameExtension(names));
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial.toString('hex'),
    subject: new x509.Name(r.subjectDer),
    issuer: caCert.subjectName,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter,
    publicKey: new x509.PublicKey(r.publicKeyDer),
    signingKey: signingKey as unknown as X509Key,
    signingAlgorithm: alg.sign as X509.X509CertificateCreateWithKeyParams['signingAlgorithm'],
    extensions,
  });
  return `${cert.toString('pem')}\n`;
}

/** What a new request asks for. */
export interface NewRequestOptions {
  commonName: string;
  organizations?: readonly string[];
  dnsNames?: readonly string[];
  ipAddresses?: readonly string[];
  /** A PEM private key to use (PKCS#8 or SEC1 ECDSA P-256); a new ECDSA P-256 key when absent. */
  keyPem?: string;
}

const EC_P256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

/**
 * Makes a PEM certificate signing request, with a new ECDSA P-256 key unless one is given (as the kubelet's
 * certificate manager does). Resolves to the request and the key (PKCS#8 PEM).
 */
export async function createCertificateRequest(o: NewRequestOptions): Promise<{ csrPem: string; keyPem: string }> {
  const x509 = x509Lib();
  let keys: webcrypto.CryptoKeyPair;
  if (o.keyPem) {
    const priv = createPrivateKey(o.keyPem);
    const pub = createPublicKey(priv);
    keys = {
      privateKey: await webcrypto.subtle.importKey(
        'pkcs8',
        priv.export({ format: 'der', type: 'pkcs8' }),
        EC_P256,
        true,
        ['sign'],
      ),
      publicKey: await webcrypto.subtle.importKey('spki', pub.export({ format: 'der', type: 'spki' }), EC_P256, true, [
        'verify',
      ]),
    };
  } else {
    keys = (await webcrypto.subtle.generateKey(EC_P256, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  }
  const escape = (v: string): string => v.replace(/([,+"\\<>;=])/g, '\\$1');
  const name = [`CN=${escape(o.commonName)}`, ...(o.organizations ?? []).map((g) => `O=${escape(g)}`)].join(', ');
  const names: X509.JsonGeneralName[] = [
    ...(o.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(o.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name,
    keys: keys as unknown as X509.Pkcs10CertificateRequestCreateParams['keys'],
    signingAlgorithm: EC_P256,
    ...(names.length ? { extensions: [new x509.SubjectAlternativeNameExtension(names)] } : {}),
  });
  const keyPem = createPrivateKey({
    key: Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)),
    format: 'der',
    type: 'pkcs8',
  }).export({ format: 'pem', type: 'pkcs8' }) as string;
  return { csrPem: `${csr.toString('pem')}\n`, keyPem };
}

const NODE_CLIENT_USAGES = [
  ['digital signature', 'key encipherment', 'client auth'],
  ['digital signature', 'client auth'],
];
const NODE_SERVING_USAGES = [
  ['digital signature', 'key encipherment', 'server auth'],
  ['digital signature', 'server auth'],
];

function sameUsages(a: readonly string[], b: readonly string[]): boolean {
  const s = new Set(a);
  const t = new Set(b);
  return s.size === t.size && [...t].every((x) => s.has(x));
}

const ORG_NOT_NODES = 'subject organization is not system:nodes';
const CN_NOT_NODE = 'subject common name does not begin with system:node:';

function isNodesOrganization(r: CertificateRequest): boolean {
  return r.organizations.length === 1 && r.organizations[0] === 'system:nodes';
}

/**
 * Why a request is not a node agent's client request, or undefined when it is (1.21 `ValidateKubeletClientCSR`,
 * its messages): O is exactly `system:nodes`, no names of any kind, CN `system:node:<name>`, client usages.
 */
export function nodeClientRequestProblem(r: CertificateRequest, usages: readonly string[]): string | undefined {
  if (!isNodesOrganization(r)) return ORG_NOT_NODES;
  if (r.dnsNames.length) return 'DNS subjectAltNames are not allowed';
  if (r.emailAddresses.length) return 'Email subjectAltNames are not allowed';
  if (r.ipAddresses.length) return 'IP subjectAltNames are not allowed';
  if (r.uris.length) return 'URI subjectAltNames are not allowed';
  if (!r.commonName.startsWith('system:node:')) return CN_NOT_NODE;
  if (!NODE_CLIENT_USAGES.some((u) => sameUsages(u, usages))) {
    return `usages did not match [${[...NODE_CLIENT_USAGES[0]!].sort().join(' ')}]`;
  }
  return undefined;
}

/**
 * Why a request is not a node agent's serving request, or undefined when it is (1.21 `ValidateKubeletServingCSR`):
 * O is exactly `system:nodes`, at least one DNS or IP name and no others, serving usages, CN `system:node:<name>`.
 */
export function nodeServingRequestProblem(r: CertificateRequest, usages: readonly string[]): string | undefined {
  if (!isNodesOrganization(r)) return ORG_NOT_NODES;
  if (r.dnsNames.length === 0 && r.ipAddresses.length === 0) return 'DNS or IP subjectAltName is required';
  if (r.emailAddresses.length) return 'Email subjectAltNames are not allowed';
  if (r.uris.length) return 'URI subjectAltNames are not allowed';
  if (!NODE_SERVING_USAGES.some((u) => sameUsages(u, usages))) {
    return `usages did not match [${[...NODE_SERVING_USAGES[0]!].sort().join(' ')}]`;
  }
  if (!r.commonName.startsWith('system:node:')) return CN_NOT_NODE;
  return undefined;
}
