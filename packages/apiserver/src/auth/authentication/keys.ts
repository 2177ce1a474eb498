/**
 * PEM keys of service account tokens: private keys that sign (`--service-account-signing-key-file`) and the public
 * (or private) keys and certificates that verify (`--service-account-key-file`). RSA and ECDSA (P-256, P-384,
 * P-521) only, as in Kubernetes.
 */
import { createPrivateKey, createPublicKey, type KeyObject, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';

import { defaultAlgorithm } from './jwt';

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g;

/** The PEM blocks of a text: type and body (the whole block, markers included). */
export function pemBlocks(text: string): { type: string; pem: string }[] {
  return [...text.matchAll(PEM_BLOCK)].map((m) => ({ type: m[1]!, pem: m[0] }));
}

function checkUsable(key: KeyObject, source: string): KeyObject {
  try {
    defaultAlgorithm(key);
  } catch (err) {
    throw new Error(`${source}: ${(err as Error).message}`);
  }
  return key;
}

/** The public keys of a PEM text: public keys, private keys (their public half) and certificates. */
export function parsePublicKeys(text: string, source: string): KeyObject[] {
  const keys: KeyObject[] = [];
  for (const b of pemBlocks(text)) {
    try {
      if (b.type === 'CERTIFICATE') keys.push(new X509Certificate(b.pem).publicKey);
      else if (b.type.includes('PRIVATE KEY')) keys.push(createPublicKey(createPrivateKey(b.pem)));
      else if (b.type.includes('PUBLIC KEY')) keys.push(createPublicKey(b.pem));
      else continue;
    } catch (err) {
      throw new Error(`${source}: cannot read the ${b.type} block: ${(err as Error).message}`);
    }
  }
  if (keys.length === 0) throw new Error(`${source}: data does not contain any valid RSA or ECDSA public keys`);
  return keys.map((k) => checkUsable(k, source));
}

/** The private key of a PEM text (the first private key block). */
export function parsePrivateKey(text: string, source: string): KeyObject {
  const block = pemBlocks(text).find((b) => b.type.includes('PRIVATE KEY'));
  if (!block) throw new Error(`${source}: data does not contain a PEM private key`);
  try {
    return checkUsable(createPrivateKey(block.pem), source);
  } catch (err) {
    throw new Error(`${source}: cannot read the private key: ${(err as Error).message.replace(`${source}: `, '')}`);
  }
}

/** Reads a file, saying which option named it when it cannot be read. */
export function readOptionFile(option: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(
      `--${option}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
}

/** The certificates of a PEM bundle; throws naming the option when there are none or one is unreadable. */
export function parseCertificates(text: string, source: string): X509Certificate[] {
  const certs: X509Certificate[] = [];
  for (const b of pemBlocks(text)) {
    if (b.type !== 'CERTIFICATE') continue;
    try {
      certs.push(new X509Certificate(b.pem));
    } catch (err) {
      throw new Error(`${source}: cannot read a certificate: ${(err as Error).message}`);
    }
  }
  if (certs.length === 0) throw new Error(`${source}: no PEM certificates found`);
  return certs;
}
