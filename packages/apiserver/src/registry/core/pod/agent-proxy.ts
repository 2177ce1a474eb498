/**
 * `pods/log`, `pods/exec`, `pods/attach` and `pods/portforward` (model: Kubernetes 1.21 `LogREST`, `ExecREST`,
 * `AttachREST`, `PortForwardREST` in `pkg/registry/core/pod/rest/`, the locations of `pkg/registry/core/pod/strategy.go`
 * and the upgrade-aware proxy): the request is checked against the pod, then handed to the node agent of the pod's
 * node on its `daemonEndpoints` port, over TLS with the server's `--agent-client-certificate` (the agent
 * authenticates the API server by it) and checking the agent by `--agent-certificate-authority` (unset: the agent's
 * certificate is not verified, as Kubernetes does without `--kubelet-certificate-authority`).
 *
 * Logs are a plain GET streamed back as they come (`follow` ends when the agent ends it or the client goes away).
 * Exec, attach and port forwarding are upgrades (SPDY/3.1 from kubectl 1.20, or WebSocket): the upgrade request is
 * replayed to the agent and the two connections are spliced, whatever protocol they then speak.
 */
import { readFileSync } from 'node:fs';
import { type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { type Duplex } from 'node:stream';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';

import { badRequest, type Kind, type Node, type Pod, StatusError } from '@platform/api';

import { type GenericStore } from '../../generic/store';
import { type RequestContext } from '../../rest/rest';

/** `--agent-*` of the API server. */
export interface AgentClientConfig {
  /** `--agent-certificate-authority`: verifies the agents' serving certificates. */
  caFile?: string;
  /** `--agent-client-certificate` / `--agent-client-key`: who the API server is to the agents. */
  certFile?: string;
  keyFile?: string;
  /** `--agent-preferred-address-types`: which of a node's addresses is dialled, in order. */
  preferredAddressTypes: string[];
  /** `--agent-timeout`, ms: connecting to an agent and its answer's headers. */
  timeoutMs: number;
}

/** Kubernetes' defaults of the `--kubelet-*` options. */
export const DEFAULT_AGENT_CLIENT: AgentClientConfig = {
  preferredAddressTypes: ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'],
  timeoutMs: 5000,
};

/** The TLS side of reaching agents: the files are read once, at start. */
export class AgentTransport {
  readonly tls: ConnectionOptions;

  constructor(readonly config: AgentClientConfig) {
    const read = (option: string, path: string): string => {
      try {
        return readFileSync(path, 'utf8');
      } catch (err) {
        throw new Error(`--${option}: ${(err as Error).message}`);
      }
    };
    this.tls = {
      ...(config.caFile ? { ca: read('agent-certificate-authority', config.caFile) } : { rejectUnauthorized: false }),
      ...(config.certFile && config.keyFile
        ? {
            cert: read('agent-client-certificate', config.certFile),
            key: read('agent-client-key', config.keyFile),
          }
        : {}),
    };
  }
}

export type PodConnectSubresource = 'log' | 'exec' | 'attach' | 'portforward';

/** What the agent's paths call each subresource. */
const AGENT_PATH: Record<PodConnectSubresource, string> = {
  log: 'containerLogs',
  exec: 'exec',
  attach: 'attach',
  portforward: 'portForward',
};

const LOG_INTEGERS = ['sinceSeconds', 'tailLines', 'limitBytes'];

/** 503 for an agent that cannot be reached, as Kubernetes answers. */
function unavailable(message: string): StatusError {
  return new StatusError({ code: 503, reason: 'ServiceUnavailable', message, details: {} });
}

/** The storage of one connect subresource of pods. */
export class PodConnectREST {
  /** GET for logs; exec, attach and port forwarding also take POST (kubectl's). */
  readonly connectMethods: readonly string[];

  constructor(
    readonly kind: Kind,
    private readonly subresource: PodConnectSubresource,
    private readonly pods: GenericStore,
    private readonly nodes: () => GenericStore | undefined,
    private readonly transport: () => AgentTransport,
  ) {
    this.connectMethods = subresource === 'log' ? ['GET'] : ['GET', 'POST'];
  }

  /** Where the agent serves this request: host, port and path with its query. */
  async location(
    ctx: RequestContext,
    name: string,
    query: URLSearchParams,
  ): Promise<{ host: string; port: number; path: string }> {
    const pod = (await this.pods.get(ctx, name, {})) as Pod;
    const ns = pod.metadata?.namespace ?? ctx.namespace;
    const params = new URLSearchParams();
    let container = '';
    if (this.subresource !== 'portforward') container = this.containerOf(pod, query.get('container') ?? '');
    if (this.subresource === 'log') {
      for (const k of LOG_INTEGERS) {
        const v = query.get(k);
        if (v === null) continue;
        if (!/^\d+$/.test(v)) throw badRequest(`${k}: must be a non-negative integer, not ${JSON.stringify(v)}`);
        params.set(k, v);
      }
      const sinceTime = query.get('sinceTime');
      if (sinceTime !== null) {
        if (Number.isNaN(Date.parse(sinceTime))) throw badRequest(`sinceTime: not an RFC 3339 time: ${sinceTime}`);
        params.set('sinceTime', sinceTime);
      }
      for (const k of ['follow', 'previous', 'timestamps']) {
        const v = query.get(k);
        if (v === 'true' || v === '1') params.set(k, 'true');
      }
    } else if (this.subresource === 'portforward') {
      for (const p of query.getAll('ports')) params.append('port', p);
    } else {
      const flag = (k: string): boolean => query.get(k) === 'true' || query.get(k) === '1';
      if (this.subresource === 'exec') {
        const command = query.getAll('command');
        if (command.length === 0) throw badRequest('you must specify at least 1 command');
        for (const c of command) params.append('command', c);
      }
      if (flag('stdin')) params.set('input', '1');
      if (flag('stdout')) params.set('output', '1');
      if (flag('stderr')) params.set('error', '1');
      if (flag('tty')) params.set('tty', '1');
      if (!flag('stdin') && !flag('stdout') && !flag('stderr'))
        throw badRequest('you must specify at least 1 of stdin, stdout, stderr');
    }
    const nodeName = pod.spec?.nodeName ?? '';
    if (!nodeName) throw badRequest(`pod ${name} does not have a host assigned`);
    const { host, port } = await this.agentAddress(ctx, nodeName);
    const segments = [AGENT_PATH[this.subresource], ns, name, ...(container ? [container] : [])];
    const qs = params.toString();
    return { host, port, path: `/${segments.map(encodeURIComponent).join('/')}${qs ? `?${qs}` : ''}` };
  }

  /** The container a request names, or the pod's only one (Kubernetes' `validateContainer`). */
  private containerOf(pod: Pod, container: string): string {
    const name = pod.metadata?.name ?? '';
    const containers = (pod.spec?.containers ?? []).map((c) => c.name);
    const inits = (pod.spec?.initContainers ?? []).map((c) => c.name);
    const ephemeral = (
      (pod.spec as { ephemeralContainers?: { name: string }[] } | undefined)?.ephemeralContainers ?? []
    ).map((c) => c.name);
    if (!container) {
      if (containers.length === 1) return containers[0]!;
      let message = `a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]`;
      if (inits.length) message += ` or one of the init containers: [${inits.join(' ')}]`;
      throw badRequest(message);
    }
    if (![...containers, ...inits, ...ephemeral].includes(container))
      throw badRequest(`container ${container} is not valid for pod ${name}`);
    return container;
  }

  /** The node's address of the first preferred type, and its agent's port. */
  private async agentAddress(ctx: RequestContext, nodeName: string): Promise<{ host: string; port: number }> {
    const nodes = this.nodes();
    if (!nodes) throw unavailable('nodes are not served: cannot reach the node agent');
    const node = (await nodes.get({ ...ctx, namespace: '' }, nodeName, {}).catch((err: unknown) => {
      throw err instanceof StatusError && err.status.code === 404
        ? unavailable(`node ${JSON.stringify(nodeName)} of the pod is not registered`)
        : err;
    })) as Node;
    const addresses = node.status?.addresses ?? [];
    for (const type of this.transport().config.preferredAddressTypes) {
      const a = addresses.find((x) => x.type === type && x.address);
      if (a) {
        const port = node.status?.daemonEndpoints?.kubeletEndpoint?.Port ?? 10250;
        return { host: a.address, port: port > 0 ? port : 10250 };
      }
    }
    throw unavailable(
      `no preferred addresses found; known addresses: [${addresses.map((a) => `{${a.type} ${a.address}}`).join(' ')}]`,
    );
  }

  /** A plain request (logs; exec without an upgrade is refused): the agent's answer is streamed back. */
  async connect(ctx: RequestContext, name: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const query = new URLSearchParams(req.url?.split('?')[1] ?? '');
    if (this.subresource !== 'log') {
      throw badRequest('Upgrade request required');
    }
    const loc = await this.location(ctx, name, query);
    const t = this.transport();
    await new Promise<void>((resolve, reject) => {
      const out = httpsRequest(
        { ...t.tls, host: loc.host, port: loc.port, path: loc.path, method: 'GET', agent: false },
        (agentRes) => {
          clearTimeout(timer);
          const code = agentRes.statusCode ?? 500;
          if (code !== 200) {
            let body = '';
            agentRes.setEncoding('utf8');
            agentRes.on('data', (c: string) => {
              if (body.length < 64 * 1024) body += c;
            });
            agentRes.on('end', () =>
              reject(
                new StatusError({
                  code,
                  reason: code === 404 ? 'NotFound' : code === 400 ? 'BadRequest' : 'InternalError',
                  message: body.trim() || `the node agent answered ${code}`,
                  details: { name, kind: 'pods' },
                }),
              ),
            );
            agentRes.on('error', reject);
            return;
          }
          // No Transfer-Encoding header: HTTP/1.1 chunks a body without a length by itself, and HTTP/2 forbids the
          // header (Node throws, out of this callback: the whole server went down on a `kubectl logs` over HTTP/2).
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          res.flushHeaders();
          agentRes.on('data', (c: Buffer) => res.write(c));
          agentRes.on('end', () => {
            res.end();
            resolve();
          });
          agentRes.on('error', () => {
            res.destroy();
            resolve();
          });
        },
      );
      // The client going away (or the server stopping) ends the agent's stream too.
      const abort = (): void => {
        out.destroy();
        resolve();
      };
      res.once('close', abort);
      ctx.signal?.addEventListener('abort', abort, { once: true });
      const timer = setTimeout(
        () => out.destroy(unavailable(`the node agent did not answer within ${t.config.timeoutMs} ms`)),
        t.config.timeoutMs,
      );
      out.on('error', (err) => {
        clearTimeout(timer);
        if (res.headersSent) {
          res.destroy();
          resolve();
        } else reject(err instanceof StatusError ? err : unavailable(`error dialing the node agent: ${err.message}`));
      });
      out.end();
    });
  }

  /**
   * An upgrade (exec, attach, port forwarding): the request is replayed to the agent (without the client's
   * credentials) and the connections are spliced; the agent's answer, a 101 or a refusal, reaches the client as is.
   */
  async upgrade(ctx: RequestContext, name: string, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const loc = await this.location(ctx, name, new URLSearchParams(req.url?.split('?')[1] ?? ''));
    const t = this.transport();
    const agent = tlsConnect({ ...t.tls, host: loc.host, port: loc.port });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => agent.destroy(unavailable(`the node agent did not answer within ${t.config.timeoutMs} ms`)),
        t.config.timeoutMs,
      );
      agent.once('secureConnect', () => {
        clearTimeout(timer);
        resolve();
      });
      agent.once('error', (err) => {
        clearTimeout(timer);
        reject(err instanceof StatusError ? err : unavailable(`error dialing the node agent: ${err.message}`));
      });
    });
    const lines = [`${req.method ?? 'GET'} ${loc.path} HTTP/1.1`, `Host: ${loc.host}:${loc.port}`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const h = req.rawHeaders[i]!.toLowerCase();
      if (h === 'host' || h === 'authorization' || h.startsWith('impersonate-')) continue;
      lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
    }
    agent.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length) agent.write(head);
    agent.pipe(socket);
    socket.pipe(agent);
    const close = (): void => {
      agent.destroy();
      socket.destroy();
    };
    agent.on('error', close);
    agent.on('close', close);
    socket.on('error', close);
    socket.on('close', close);
    ctx.signal?.addEventListener('abort', close, { once: true });
  }
}
