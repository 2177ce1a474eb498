/**
 * SNI certificate selection with Kubernetes' precedence (`dynamiccertificates/named_certificates.go` and Go's
 * `tls.Config.getCertificate`):
 * - each `--tls-sni-cert-key` entry serves its explicit patterns, or, without patterns, the names extracted from its
 *   certificate (the common name when it is a DNS name, then the DNS SANs; never IP SANs);
 * - explicit patterns beat extracted names; among equals, the entry given first wins;
 * - a server name is looked up exactly first, then with its first label replaced by `*` (non-wildcard beats
 *   wildcard);
 * - a client that sends no server name (it connected by IP) gets the entry whose pattern is the local IP it
 *   connected to; otherwise the default certificate.
 */
import { isIP } from 'node:net';

import { FlagValueError } from '../options/parsers';
import { type CertKeyPair } from './cert-key';

/** One parsed `--tls-sni-cert-key` value. */
export interface NamedCertKeyFiles {
  certFile: string;
  keyFile: string;
  names: string[];
}

/** Parses `cert,key` or `cert,key:pattern1,pattern2`; throws naming what is missing. */
export function parseNamedCertKey(text: string): NamedCertKeyFiles {
  const colon = text.indexOf(':');
  const files = (colon < 0 ? text : text.slice(0, colon)).split(',').map((s) => s.trim());
  if (files.length !== 2 || files[0] === '' || files[1] === '') {
    throw new FlagValueError('expected comma separated certificate and key file paths');
  }
  const names =
    colon < 0
      ? []
      : text
          .slice(colon + 1)
          .split(',')
          .map((s) => s.trim().toLowerCase())
          .filter((s) => s !== '');
  for (const n of names) {
    if (
      isIP(n) === 0 &&
      !/^(\*\.)*[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(n) &&
      n !== '*'
    ) {
      throw new FlagValueError(
        `invalid domain pattern ${JSON.stringify(n)}: want a fully qualified name, optionally with leading "*." segments, or an IP`,
      );
    }
  }
  return { certFile: files[0]!, keyFile: files[1]!, names };
}

/** An SNI entry: a loaded pair and its explicit patterns (empty: use the certificate's names). */
export interface NamedCertKey {
  pair: CertKeyPair;
  names: readonly string[];
}

const DNS1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The names a certificate serves for SNI: CN when it is a (wildcard) DNS name, then the DNS SANs. */
export function certificateNames(pair: CertKeyPair): string[] {
  const names: string[] = [];
  const cn = /(?:^|\n)CN=([^\n]*)/.exec(pair.leaf.subject)?.[1] ?? '';
  if (cn !== '' && isIP(cn) === 0 && (cn === '*' || DNS1123.test(cn.replace(/^\*\./, ''))))
    names.push(cn.toLowerCase());
  for (const part of (pair.leaf.subjectAltName ?? '').split(', ')) {
    if (part.startsWith('DNS:')) names.push(part.slice(4).toLowerCase());
  }
  return names;
}

/** Name → certificate map built once from the SNI entries; {@link select} picks a certificate per connection. */
export class SniCertificateMap {
  readonly byName = new Map<string, CertKeyPair>();

  constructor(entries: readonly NamedCertKey[]) {
    const explicit = new Map<string, CertKeyPair>();
    // Backwards, so that earlier entries overwrite later ones.
    for (let i = entries.length - 1; i >= 0; i--) {
      const e = entries[i]!;
      for (const n of e.names) explicit.set(n.toLowerCase(), e.pair);
      if (e.names.length === 0) for (const n of certificateNames(e.pair)) this.byName.set(n, e.pair);
    }
    for (const [n, p] of explicit) this.byName.set(n, p);
  }

  /** The pair for a server name (exact, then wildcard) or, without one, for the local IP; undefined → default. */
  select(serverName: string | undefined, localAddress?: string): CertKeyPair | undefined {
    if (serverName) {
      const name = serverName.toLowerCase();
      const exact = this.byName.get(name);
      if (exact) return exact;
      const labels = name.split('.');
      labels[0] = '*';
      return this.byName.get(labels.join('.'));
    }
    if (localAddress) return this.byName.get(normalizeIP(localAddress));
    return undefined;
  }

  /** IP patterns (for dispatching connections that carry no server name). */
  ipNames(): string[] {
    return [...this.byName.keys()].filter((n) => isIP(n) !== 0);
  }
}

/** `::ffff:1.2.3.4` → `1.2.3.4`; other addresses unchanged. */
export function normalizeIP(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
