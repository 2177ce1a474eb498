/**
 * Calls to admission webhooks over HTTPS (model: apiserver `pkg/util/webhook`): the webhook's CA bundle (system
 * roots without one), the server name of a service-addressed webhook for SNI and verification
 * (`<service>.<namespace>.svc`), the API server's client certificate (`--proxy-client-cert-file` /
 * `--proxy-client-key-file`) when configured, a per-call time-out, and a bounded response size.
 */
import { request } from 'node:https';

import { type Endpoints, type Service, type WebhookClientConfig } from '@platform/api';

import { type InternalClient } from '../internal-client';

/** The most a webhook may answer with. */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/** Where and how to reach one webhook. */
export interface WebhookTarget {
  url: URL;
  /** PEM CA bundle; undefined: the system roots. */
  ca?: string;
  /** The TLS server name to verify (service-addressed webhooks). */
  servername?: string;
}

/** Why a call failed (turned into the webhook's failure policy by the caller). */
export class WebhookCallError extends Error {
  override readonly name = 'WebhookCallError';
}

/** Resolves a webhook's client configuration to a URL (a service goes to one of its endpoints, else its cluster IP). */
export async function resolveTarget(c: WebhookClientConfig, client: InternalClient): Promise<WebhookTarget> {
  const ca = c.caBundle ? Buffer.from(c.caBundle, 'base64').toString('utf8') : undefined;
  if (c.url) return { url: new URL(c.url), ...(ca ? { ca } : {}) };
  const svc = c.service;
  if (!svc) throw new WebhookCallError('the webhook has neither url nor service');
  const servername = `${svc.name}.${svc.namespace}.svc`;
  const port = svc.port ?? 443;
  const path = svc.path ?? '/';
  const service = (await client.get({ group: '', resource: 'services' }, svc.namespace, svc.name)) as
    Service | undefined;
  if (!service) throw new WebhookCallError(`service ${svc.namespace}/${svc.name} not found`);
  const sp = service.spec?.ports?.find((p) => p.port === port);
  if (!sp) throw new WebhookCallError(`service ${svc.namespace}/${svc.name} has no port ${port}`);
  let host: string | undefined;
  let targetPort: number | undefined;
  const eps = (await client.get({ group: '', resource: 'endpoints' }, svc.namespace, svc.name)) as
    Endpoints | undefined;
  for (const subset of eps?.subsets ?? []) {
    const p = (subset.ports ?? []).find((x) => (sp.name ? x.name === sp.name : true));
    const addr = subset.addresses?.[0]?.ip;
    if (p && addr) {
      host = addr;
      targetPort = p.port;
      break;
    }
  }
  if (!host) {
    host = service.spec?.clusterIP && service.spec.clusterIP !== 'None' ? service.spec.clusterIP : undefined;
    targetPort = port;
  }
  if (!host) throw new WebhookCallError(`service ${svc.namespace}/${svc.name} has no endpoints`);
  const h = host.includes(':') ? `[${host}]` : host;
  return { url: new URL(`https://${h}:${targetPort}${path}`), servername, ...(ca ? { ca } : {}) };
}

/** POSTs `body` as JSON and resolves the parsed JSON answer; rejects with a WebhookCallError. */
export function postJson(
  target: WebhookTarget,
  body: unknown,
  o: { timeoutMs: number; clientCert?: { cert: string; key: string } },
): Promise<unknown> {
  const payload = Buffer.from(JSON.stringify(body));
  const where = `Post "${target.url.href}"`;
  return new Promise((resolve, reject) => {
    let done = false;
    const fail = (msg: string): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      reject(new WebhookCallError(`${where}: ${msg}`));
    };
    const req = request(
      target.url,
      {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json',
          'Content-Length': payload.length,
        },
        ...(target.ca ? { ca: target.ca } : {}),
        ...(target.servername ? { servername: target.servername } : {}),
        ...(o.clientCert ? { cert: o.clientCert.cert, key: o.clientCert.key } : {}),
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) fail(`the response is larger than ${MAX_RESPONSE_BYTES} bytes`);
          else chunks.push(c);
        });
        res.on('error', (err) => fail(err.message));
        res.on('end', () => {
          if (done) return;
          const text = Buffer.concat(chunks).toString('utf8');
          const code = res.statusCode ?? 0;
          if (code < 200 || code >= 300) {
            fail(`the server responded with status ${code}`);
            return;
          }
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch (err) {
            fail(`the response is not valid JSON: ${(err as Error).message}`);
            return;
          }
          done = true;
          clearTimeout(timer);
          resolve(parsed);
        });
      },
    );
    const timer = setTimeout(() => fail(`context deadline exceeded (timeout ${o.timeoutMs / 1000}s)`), o.timeoutMs);
    req.on('error', (err) => fail(err.message));
    req.end(payload);
  });
}
