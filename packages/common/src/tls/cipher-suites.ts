/**
 * `--tls-cipher-suites` and `--tls-min-version`: the IANA suite names of Document 2 mapped to the OpenSSL names
 * Node's `tls` module takes, and Go's `VersionTLSxx` names mapped to Node's `minVersion`.
 *
 * TLS 1.3 suites: Go (and so Kubernetes) accepts their names but always enables all three for TLS 1.3. Node lets
 * them be chosen: when the list names any TLS 1.3 suite, TLS 1.3 is restricted to the named ones; when it names
 * none, TLS 1.3 keeps OpenSSL's default three (Go's behaviour). A list of only TLS 1.3 suites makes the server
 * TLS 1.3-only, as it does in Go.
 */
import { getCiphers, type SecureVersion } from 'node:tls';

/** Document 2's preferred suites, IANA name → OpenSSL name. */
export const SECURE_CIPHER_SUITES: Readonly<Record<string, string>> = {
  TLS_AES_128_GCM_SHA256: 'TLS_AES_128_GCM_SHA256',
  TLS_AES_256_GCM_SHA384: 'TLS_AES_256_GCM_SHA384',
  TLS_CHACHA20_POLY1305_SHA256: 'TLS_CHACHA20_POLY1305_SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA: 'ECDHE-RSA-DES-CBC3-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_RSA_WITH_3DES_EDE_CBC_SHA: 'DES-CBC3-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
};

/** Document 2's insecure suites, IANA name → OpenSSL name. Accepted with a warning. */
export const INSECURE_CIPHER_SUITES: Readonly<Record<string, string>> = {
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: 'ECDHE-ECDSA-AES128-SHA256',
  TLS_ECDHE_ECDSA_WITH_RC4_128_SHA: 'ECDHE-ECDSA-RC4-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: 'ECDHE-RSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_RC4_128_SHA: 'ECDHE-RSA-RC4-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA256: 'AES128-SHA256',
  TLS_RSA_WITH_RC4_128_SHA: 'RC4-SHA',
};

/** A rejected cipher suite or TLS version; the message names it. */
export class TlsConfigError extends Error {
  readonly isTlsConfigError = true;
  constructor(message: string) {
    super(message);
    this.name = 'TlsConfigError';
  }
}

/** Brand check for {@link TlsConfigError}. */
export function isTlsConfigError(err: unknown): err is TlsConfigError {
  return typeof err === 'object' && err !== null && (err as { isTlsConfigError?: unknown }).isTlsConfigError === true;
}

/** The outcome of mapping `--tls-cipher-suites`. */
export interface CipherSelection {
  /** The `ciphers` string for Node (OpenSSL names joined by `:`), or undefined to keep Node's defaults. */
  ciphers?: string;
  /** One line per insecure suite chosen, and per suite this Node's OpenSSL cannot do (it is dropped). */
  warnings: string[];
}

/**
 * Maps IANA suite names to a Node `ciphers` string. Throws {@link TlsConfigError} naming every unknown suite, or
 * when none of the chosen suites is available in this Node's OpenSSL. An empty list keeps Node's defaults.
 */
export function mapCipherSuites(names: readonly string[]): CipherSelection {
  if (names.length === 0) return { warnings: [] };
  const unknown = names.filter((n) => !(n in SECURE_CIPHER_SUITES) && !(n in INSECURE_CIPHER_SUITES));
  if (unknown.length > 0) {
    throw new TlsConfigError(`--tls-cipher-suites: cipher suite ${unknown.join(', ')} not supported or doesn't exist`);
  }
  const available = new Set(getCiphers().map((c) => c.toUpperCase()));
  const warnings: string[] = [];
  const chosen: string[] = [];
  for (const name of names) {
    const insecure = INSECURE_CIPHER_SUITES[name];
    const openssl = SECURE_CIPHER_SUITES[name] ?? insecure!;
    if (insecure !== undefined) warnings.push(`Use of insecure cipher '${name}' detected.`);
    if (!available.has(openssl.toUpperCase())) {
      warnings.push(
        `cipher suite ${name} (${openssl}) is not available in this Node.js build of OpenSSL; it is ignored`,
      );
      continue;
    }
    if (!chosen.includes(openssl)) chosen.push(openssl);
  }
  if (chosen.length === 0) {
    throw new TlsConfigError(
      `--tls-cipher-suites: none of ${names.join(', ')} is available in this Node.js build of OpenSSL`,
    );
  }
  return { ciphers: chosen.join(':'), warnings };
}

const VERSIONS: Readonly<Record<string, SecureVersion>> = {
  VersionTLS10: 'TLSv1',
  VersionTLS11: 'TLSv1.1',
  VersionTLS12: 'TLSv1.2',
  VersionTLS13: 'TLSv1.3',
};

/**
 * Maps `--tls-min-version` to Node's `minVersion`; empty keeps Node's default (TLS 1.2). Throws
 * {@link TlsConfigError} naming an unknown version.
 */
export function mapTlsVersion(name: string): SecureVersion | undefined {
  if (name === '') return undefined;
  const v = VERSIONS[name];
  if (v === undefined) {
    throw new TlsConfigError(
      `--tls-min-version: unknown tls version ${JSON.stringify(name)}: allowed values are ${Object.keys(VERSIONS).join(', ')}`,
    );
  }
  return v;
}
