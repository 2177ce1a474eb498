/**
 * Small HTTPS JSON client for the authentication methods that call out (OIDC discovery and key sets, the token
 * webhook): a bounded body, a timeout, and the caller's trust roots and client certificate.
 */
import { request } from 'node:https';

/** TLS settings of a call. Unset `ca`: the host's roots. */
export interface HttpsTls {
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Sends `body` (JSON) or a GET to an https URL; resolves the status and the decoded JSON answer. */
export function httpsJson(
  url: string,
  o: { method?: 'GET' | 'POST'; body?: unknown; tls?: HttpsTls; timeoutMs: number; headers?: Record<string, string> },
): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      reject(new Error(`invalid URL ${JSON.stringify(url)}`));
      return;
    }
    if (u.protocol !== 'https:') {
      reject(new Error(`${url}: only https URLs are allowed`));
      return;
    }
    const payload = o.body === undefined ? undefined : Buffer.from(JSON.stringify(o.body));
    const req = request(
      u,
      {
        method: o.method ?? 'GET',
        ...(o.tls?.ca ? { ca: o.tls.ca } : {}),
        ...(o.tls?.cert ? { cert: o.tls.cert } : {}),
        ...(o.tls?.key ? { key: o.tls.key } : {}),
        headers: {
          accept: 'application/json',
          ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
          ...o.headers,
        },
        timeout: o.timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BODY_BYTES) {
            req.destroy(new Error(`${url}: answer larger than ${MAX_BODY_BYTES} bytes`));
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            reject(new Error(`${url}: answer ${res.statusCode} is not JSON`));
            return;
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer within ${o.timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}
