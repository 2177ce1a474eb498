/**
 * Proxying to extension API servers (model: kube-aggregator 1.21 `pkg/apiserver/handler_proxy.go` and apiserver's
 * `pkg/util/proxy`): where an APIService's service is reached (its cluster IP, or with `--enable-aggregator-routing`
 * one of its endpoints' addresses), the TLS client settings (the APIService's CA bundle or insecureSkipTLSVerify,
 * the proxy client certificate, the server name `<service>.<namespace>.svc`), and the forwarding of plain requests,
 * streams (watches) and upgrades (WebSocket, SPDY) with the requesting user in the request-header headers. A request
 * that spelled the group the Kubernetes way (`/apis/metrics.k8s.io/...`) is sent with the `.platform` spelling, and
 * a JSON answer (not a watch stream) is respelled back: its apiVersions, a Status's group, a discovery document's
 * group versions (`../endpoints/group-alias.ts`).
 */
import { type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import https from 'node:https';
import { type Duplex } from 'node:stream';

import { type APIService, type Endpoints, type Service } from '@platform/api';

import { type GroupAlias, respellDiscovery, respellObject } from '../endpoints/group-alias';
import { type UserInfo } from '../registry/rest/rest';

/** The headers that carry the requesting user to an extension server (`--requestheader-*`; X-Remote-* unset). */
export interface UserHeaders {
  username: string;
  group: string;
  extraPrefix: string;
}

/** Kubernetes' names of the user headers, used when `--requestheader-*` names none. */
export const DEFAULT_USER_HEADERS: UserHeaders = {
  username: 'X-Remote-User',
  group: 'X-Remote-Group',
  extraPrefix: 'X-Remote-Extra-',
};

/** Where a request to an extension server goes. */
export interface Location {
  host: string;
  port: number;
}

/** The objects location resolution reads, from the aggregator's informers. */
export interface ServiceLookup {
  service(namespace: string, name: string): Service | undefined;
  endpoints(namespace: string, name: string): Endpoints | undefined;
}

/**
 * Where an APIService's service answers on its port: the cluster IP (or an ExternalName's host), or, when
 * `useEndpoints`, a random ready endpoint address with the endpoint port named like the service port
 * (`ResolveCluster` / `ResolveEndpoint`). Throws an Error saying why the service cannot be reached.
 */
export function resolveLocation(apiService: APIService, lookup: ServiceLookup, useEndpoints: boolean): Location {
  const ref = apiService.spec?.service;
  if (!ref) throw new Error('the APIService is local');
  const namespace = ref.namespace ?? '';
  const name = ref.name ?? '';
  const port = ref.port ?? 443;
  const svc = lookup.service(namespace, name);
  if (!svc) throw new Error(`service "${name}" not found`);
  if (svc.spec?.type === 'ExternalName') return { host: svc.spec.externalName ?? '', port };
  const svcPort = (svc.spec?.ports ?? []).find((p) => p.port === port);
  if (!svcPort) throw new Error(`no service port ${port} found for service "${name}"`);
  if (!useEndpoints) {
    const ip = svc.spec?.clusterIP ?? '';
    if (ip === '' || ip === 'None') throw new Error(`cannot route to service with ClusterIP "${ip}"`);
    return { host: ip, port };
  }
  const eps = lookup.endpoints(namespace, name);
  if (!eps) throw new Error(`endpoints for service/${name} in "${namespace}" not found`);
  const candidates: Location[] = [];
  for (const subset of eps.subsets ?? []) {
    const epPort = (subset.ports ?? []).find((p) => (p.name ?? '') === (svcPort.name ?? ''));
    if (!epPort) continue;
    for (const a of subset.addresses ?? []) candidates.push({ host: a.ip, port: epPort.port });
  }
  const pick = candidates[Math.floor(Math.random() * candidates.length)];
  if (!pick) throw new Error(`no endpoints available for service "${name}"`);
  return pick;
}

/** The TLS client settings of requests to an APIService's server. */
export interface ProxyTls {
  /** `--proxy-client-cert-file` / `--proxy-client-key-file`, PEM. */
  clientCert?: { cert: string; key: string };
}

const agents = new Map<string, https.Agent>();

/** The HTTPS agent of an APIService's TLS settings (shared by APIServices with the same settings). */
export function agentFor(apiService: APIService, tls: ProxyTls): https.Agent {
  const spec = apiService.spec;
  const ca = spec?.caBundle ? Buffer.from(spec.caBundle, 'base64').toString('utf8') : '';
  const insecure = spec?.insecureSkipTLSVerify === true;
  const key = JSON.stringify([ca, insecure, tls.clientCert?.cert ?? '', tls.clientCert?.key ?? '']);
  let agent = agents.get(key);
  if (!agent) {
    agent = new https.Agent({
      keepAlive: true,
      rejectUnauthorized: !insecure,
      ...(ca ? { ca } : {}),
      ...(tls.clientCert ? { cert: tls.clientCert.cert, key: tls.clientCert.key } : {}),
    });
    agents.set(key, agent);
  }
  return agent;
}

/** The name the extension server's certificate must carry (`<service>.<namespace>.svc`). */
export function serverNameOf(apiService: APIService): string {
  const ref = apiService.spec?.service;
  return `${ref?.name ?? ''}.${ref?.namespace ?? ''}.svc`;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * The headers of a proxied request: the client's, without hop-by-hop headers, credentials and any user headers the
 * client sent itself, plus the authenticated user (`transport.NewAuthProxyRoundTripper`).
 */
export function proxiedHeaders(
  req: IncomingMessage,
  user: UserInfo | undefined,
  names: UserHeaders,
  keepUpgrade: boolean,
): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  const lower = {
    username: names.username.toLowerCase(),
    group: names.group.toLowerCase(),
    extra: names.extraPrefix.toLowerCase(),
  };
  for (const [k, v] of Object.entries(req.headers)) {
    // HTTP/2 pseudo-headers (`:path`, `:authority`) are not headers of the HTTP/1.1 request upstream.
    if (v === undefined || k.startsWith(':')) continue;
    if (k === 'authorization' || k === 'host') continue;
    if (k === lower.username || k === lower.group || k.startsWith(lower.extra)) continue;
    if (k.startsWith('impersonate-')) continue;
    if (HOP_BY_HOP.has(k) && !(keepUpgrade && (k === 'connection' || k === 'upgrade'))) continue;
    out[k] = v;
  }
  return user ? { ...out, ...userHeaders(user, names) } : out;
}

/** The headers that name a user to an extension server (`transport.SetAuthProxyHeaders`). */
export function userHeaders(user: UserInfo, names: UserHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = { [names.username]: user.name };
  if (user.groups.length) out[names.group] = [...user.groups];
  for (const [key, values] of Object.entries(user.extra ?? {}))
    out[`${names.extraPrefix}${encodeURIComponent(key)}`] = [...values];
  return out;
}

/** What a proxied request needs besides the client's request. */
export interface ProxyTarget {
  apiService: APIService;
  location: Location;
  tls: ProxyTls;
  user: UserInfo | undefined;
  headers: UserHeaders;
  /** The Kubernetes spelling the request used for the group, and whether the answer is respelled back to it. */
  alias?: GroupAlias & { respellAnswer: boolean };
  /** Registers how to close the proxied connection at server shutdown; returns the unregistration. */
  track: (close: () => void) => () => void;
}

/** A request path with a Kubernetes group spelling (`/apis/metrics.k8s.io/...`) in the platform's. */
export function platformPath(url: string, alias: GroupAlias | undefined): string {
  const prefix = alias && `/apis/${alias.requested}`;
  if (!alias || !prefix || !(url === prefix || url.startsWith(`${prefix}/`) || url.startsWith(`${prefix}?`)))
    return url;
  return `/apis/${alias.platform}${url.slice(prefix.length)}`;
}

function requestOptions(req: IncomingMessage, t: ProxyTarget, keepUpgrade: boolean): https.RequestOptions {
  const headers = proxiedHeaders(req, t.user, t.headers, keepUpgrade);
  // An answer to respell is read whole: asked for uncompressed.
  if (t.alias?.respellAnswer) delete headers['accept-encoding'];
  return {
    host: t.location.host,
    port: t.location.port,
    method: req.method ?? 'GET',
    path: platformPath(req.url ?? '/', t.alias),
    headers: { ...headers, host: `${t.location.host}:${t.location.port}` },
    agent: keepUpgrade ? false : agentFor(t.apiService, t.tls),
    servername: serverNameOf(t.apiService),
    ...(keepUpgrade ? upgradeTls(t) : {}),
  };
}

function upgradeTls(t: ProxyTarget): https.RequestOptions {
  const spec = t.apiService.spec;
  const ca = spec?.caBundle ? Buffer.from(spec.caBundle, 'base64').toString('utf8') : undefined;
  return {
    rejectUnauthorized: spec?.insecureSkipTLSVerify !== true,
    ...(ca ? { ca } : {}),
    ...(t.tls.clientCert ? { cert: t.tls.clientCert.cert, key: t.tls.clientCert.key } : {}),
  };
}

/**
 * Forwards a request and streams the answer back (a watch streams until either side ends). `onError` gets a
 * failure to reach the server before any of the answer was written (the caller answers 503).
 */
export function proxyRequest(
  req: IncomingMessage,
  res: ServerResponse,
  t: ProxyTarget,
  onError: (err: Error) => void,
): void {
  const upstream = https.request(requestOptions(req, t, false), (answer) => {
    const headers: OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
    const alias = t.alias;
    if (alias?.respellAnswer && /^application\/json\b/.test(answer.headers['content-type'] ?? '')) {
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('error', () => res.destroy());
      answer.on('end', () => {
        const body = respellJson(Buffer.concat(chunks), alias);
        res.writeHead(answer.statusCode ?? 502, { ...headers, 'content-length': body.length });
        res.end(body);
      });
      return;
    }
    res.writeHead(answer.statusCode ?? 502, headers);
    // Streams (watches) are flushed as they come.
    res.flushHeaders();
    answer.pipe(res);
    answer.on('error', () => res.destroy());
  });
  const untrack = t.track(() => upstream.destroy());
  // `writableEnded`, not `writableFinished`: HTTP/2's compatible response says finished when its stream was reset.
  res.on('close', () => {
    untrack();
    if (!res.writableEnded) upstream.destroy();
  });
  upstream.on('error', (err) => {
    if (res.headersSent) res.destroy();
    else onError(err);
  });
  req.pipe(upstream);
}

/** A JSON answer in the spelling of the request's group; a body that is not JSON is passed as it came. */
function respellJson(body: Buffer, alias: GroupAlias): Buffer {
  let obj: unknown;
  try {
    obj = JSON.parse(body.toString('utf8'));
  } catch {
    return body;
  }
  if (obj === null || typeof obj !== 'object') return body;
  const o = obj as { kind?: unknown };
  const out =
    o.kind === 'APIResourceList' || o.kind === 'APIGroup'
      ? respellDiscovery(obj as never, alias)
      : respellObject(obj, alias);
  return Buffer.from(JSON.stringify(out));
}

/**
 * Forwards an upgrade request (WebSocket, SPDY) and splices the two connections once the server switches
 * protocols; a server that answers without switching has its answer passed back as is. `onError` gets a failure
 * to reach the server (the caller answers 503 on the socket).
 */
export function proxyUpgrade(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  t: ProxyTarget,
  onError: (err: Error) => void,
): void {
  const upstream = https.request(requestOptions(req, t, true));
  const rawHead = (code: number | undefined, message: string | undefined, raw: string[]): string => {
    let s = `HTTP/1.1 ${code ?? 502} ${message ?? ''}\r\n`;
    for (let i = 0; i + 1 < raw.length; i += 2) s += `${raw[i]}: ${raw[i + 1]}\r\n`;
    return `${s}\r\n`;
  };
  upstream.on('upgrade', (answer, upSocket, upHead) => {
    socket.write(rawHead(answer.statusCode, answer.statusMessage, answer.rawHeaders));
    if (upHead.length) socket.write(upHead);
    upSocket.pipe(socket);
    socket.pipe(upSocket);
    const close = (): void => {
      upSocket.destroy();
      socket.destroy();
    };
    const untrack = t.track(close);
    upSocket.on('error', close);
    socket.on('error', close);
    upSocket.on('close', close);
    socket.on('close', () => (untrack(), close()));
  });
  upstream.on('response', (answer) => {
    socket.write(
      rawHead(
        answer.statusCode,
        answer.statusMessage,
        answer.rawHeaders.filter(
          (_, i, a) =>
            !(i % 2 === 0 && a[i]?.toLowerCase() === 'transfer-encoding') &&
            !(i % 2 === 1 && a[i - 1]?.toLowerCase() === 'transfer-encoding'),
        ),
      ).replace(/\r\n\r\n$/, '\r\nConnection: close\r\n\r\n'),
    );
    answer.pipe(socket);
  });
  upstream.on('error', (err) => {
    if (socket.writable) onError(err);
  });
  upstream.end(head);
}
