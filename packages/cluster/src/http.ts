/**
 * One HTTPS request of the launcher to its own API server, with the admin token and the cluster's CA. The launcher
 * makes two kinds of request (create a binding, read a Lease) and no more: Node's `https` rather than the client
 * package, whose loading (the API types and their validators) costs about a second of CPU on the way to ready.
 */
import { request } from 'node:https';

/** The answer: its status and its body parsed as JSON (undefined when it is not JSON). */
export interface JsonAnswer {
  status: number;
  body: unknown;
}

/** Sends `body` (as JSON) with `method` to `url`; never rejects on an HTTP error status, rejects on a network error. */
export function requestJson(
  url: string,
  o: { token: string; ca: string; method?: string; body?: unknown; timeoutMs?: number },
): Promise<JsonAnswer> {
  return new Promise((resolve, reject) => {
    const payload = o.body === undefined ? undefined : JSON.stringify(o.body);
    const req = request(
      url,
      {
        method: o.method ?? 'GET',
        ca: o.ca,
        agent: false,
        timeout: o.timeoutMs ?? 5000,
        headers: {
          Authorization: `Bearer ${o.token}`,
          Accept: 'application/json',
          ...(payload === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} within ${o.timeoutMs ?? 5000} ms`)));
    req.end(payload);
  });
}
