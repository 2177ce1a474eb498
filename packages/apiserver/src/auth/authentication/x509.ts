/**
 * Client certificates (model: apiserver `pkg/authentication/request/x509`): the secure server asks every client for
 * a certificate without requiring one; this module checks the chain the client sent against a CA bundle itself
 * (signatures, issuer names, CA flags, validity dates, the client-auth usage) and reads the user from it: the
 * CommonName is the user name, each Organization a group.
 */
import { type PeerCertificate, type TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { type IncomingMessage } from 'node:http';

import { AuthenticationError, type Authenticator, type UserInfo } from '../authenticator';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_USAGE = '2.5.29.37.0';
const MAX_CHAIN = 10;

/** The certificate chain the client presented, leaf first; undefined without TLS or a client certificate. */
export interface ClientChain {
  leaf: X509Certificate;
  intermediates: X509Certificate[];
  /** The parsed subject of the leaf (multi-valued attributes as arrays). */
  subject: Record<string, string | string[]>;
}

const chains = new WeakMap<object, ClientChain | null>();

/** The client's chain, read once per TLS connection. */
export function clientChain(req: IncomingMessage): ClientChain | undefined {
  const socket = req.socket as Partial<TLSSocket>;
  if (typeof socket.getPeerCertificate !== 'function') return undefined;
  const cached = chains.get(socket);
  if (cached !== undefined) return cached ?? undefined;
  let chain: ClientChain | null = null;
  try {
    const peer = socket.getPeerCertificate(true);
    if (peer && peer.raw) {
      const leaf = new X509Certificate(peer.raw);
      const intermediates: X509Certificate[] = [];
      let cur: PeerCertificate & { issuerCertificate?: PeerCertificate } = peer;
      const seen = new Set<string>([peer.fingerprint256]);
      while (
        intermediates.length < MAX_CHAIN &&
        cur.issuerCertificate &&
        !seen.has(cur.issuerCertificate.fingerprint256)
      ) {
        cur = cur.issuerCertificate;
        seen.add(cur.fingerprint256);
        intermediates.push(new X509Certificate(cur.raw));
      }
      chain = { leaf, intermediates, subject: (peer.subject ?? {}) as unknown as Record<string, string | string[]> };
    }
  } catch {
    chain = null;
  }
  chains.set(socket, chain);
  return chain ?? undefined;
}

function validAt(c: X509Certificate, now: number): boolean {
  return Date.parse(c.validFrom) <= now && now <= Date.parse(c.validTo);
}

function signedBy(child: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return child.checkIssued(issuer) && child.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

/**
 * Verifies `chain` against `roots` at `now`; throws {@link AuthenticationError} saying why it fails. The leaf must
 * be valid, allowed for client authentication, and lead through valid CA certificates to one of the roots.
 */
export function verifyChain(chain: ClientChain, roots: readonly X509Certificate[], now: number): void {
  const { leaf } = chain;
  if (!validAt(leaf, now)) throw new AuthenticationError('x509: certificate has expired or is not yet valid');
  const usages = leaf.keyUsage;
  if (usages && usages.length > 0 && !usages.includes(CLIENT_AUTH) && !usages.includes(ANY_USAGE))
    throw new AuthenticationError('x509: certificate specifies an incompatible key usage');
  let cur = leaf;
  const pool = [...chain.intermediates];
  for (let depth = 0; depth <= MAX_CHAIN; depth++) {
    const root = roots.find((r) => signedBy(cur, r));
    if (root) {
      if (!validAt(root, now)) throw new AuthenticationError('x509: the authority certificate has expired');
      return;
    }
    const idx = pool.findIndex((c) => c.ca && validAt(c, now) && signedBy(cur, c));
    if (idx < 0) throw new AuthenticationError('x509: certificate signed by unknown authority');
    cur = pool[idx]!;
    pool.splice(idx, 1);
  }
  throw new AuthenticationError('x509: certificate chain too long');
}

function values(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

/** The user of a verified client certificate: CN the name, O entries the groups. */
export function certificateUser(chain: ClientChain): UserInfo {
  const name = values(chain.subject.CN)[0] ?? '';
  return { name, groups: values(chain.subject.O) };
}

/** `--client-ca-file`: requests with a client certificate signed by `roots` are that certificate's user. */
export function x509Authenticator(roots: readonly X509Certificate[], now: () => number = Date.now): Authenticator {
  return {
    async authenticate(req) {
      const chain = clientChain(req);
      if (!chain) return undefined;
      verifyChain(chain, roots, now());
      const user = certificateUser(chain);
      if (user.name === '') throw new AuthenticationError('x509: the certificate has no common name');
      return { user };
    },
  };
}
