/**
 * The servers of `--simulate-nodes`: each simulated node answers on its own loopback address (127.1.x.y, its
 * InternalIP) at `--port`, the port its status advertises, so that a metrics server scrapes it as it scrapes any
 * node. One HTTPS server (one certificate, the authentication and authorization of the agent's server, with the
 * node's name in its SubjectAccessReviews) is fed by one listener per node address; the address a connection came
 * in on names the node. It serves `/healthz` and `/metrics/resource` with small deterministic values (below); every
 * other path is a 404 (a simulated node has no logs, exec or port-forward). A node whose address cannot be bound
 * (another process holds the port there) is logged once and serves nothing.
 *
 * Simulated usage, a function of time only: each container of a Running pod uses {@link SIM_CONTAINER_CORES} of a
 * core since the pod started and {@link SIM_CONTAINER_BYTES}; the node uses {@link SIM_NODE_CORES} since the agent
 * started and {@link SIM_NODE_BYTES}, plus its containers'.
 */
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { type IncomingMessage, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';

import { type Pod } from '@platform/api';
import { type Clientset } from '@platform/client';
import { type Logger } from '@platform/common';

import { type AgentValues } from '../../cmd/options';
import { RequestAuth } from '../../server/auth';
import { servingCertKey } from '../../server/server';
import { PROMETHEUS_TEXT_TYPE, renderResourceMetrics, type ResourceSummary } from '../../stats/resource-metrics';

/** CPU of each simulated container, in cores (2m). */
export const SIM_CONTAINER_CORES = 0.002;
/** Working set of each simulated container (8 MiB). */
export const SIM_CONTAINER_BYTES = 8 * 1024 * 1024;
/** CPU of a simulated node besides its pods, in cores (50m). */
export const SIM_NODE_CORES = 0.05;
/** Working set of a simulated node besides its pods (512 MiB). */
export const SIM_NODE_BYTES = 512 * 1024 * 1024;

function startOf(p: Pod): number {
  return Date.parse(p.status?.startTime ?? '') || Date.parse(p.metadata?.creationTimestamp ?? '') || 0;
}

/**
 * The simulated usage of a node started at `startedAt` (ms) running `pods` (those not Running, or terminating,
 * use nothing), at `now`.
 */
export function simulatedSummary(startedAt: number, pods: readonly Pod[], now: number): ResourceSummary {
  const containers: ResourceSummary['containers'] = [];
  for (const p of pods) {
    if (p.status?.phase !== 'Running' || p.metadata?.deletionTimestamp) continue;
    const seconds = Math.max(0, now - (startOf(p) || now)) / 1000;
    for (const c of p.spec?.containers ?? [])
      containers.push({
        namespace: p.metadata?.namespace ?? '',
        pod: p.metadata?.name ?? '',
        container: c.name,
        cpu: { timestamp: now, usageCoreNanoSeconds: Math.round(SIM_CONTAINER_CORES * seconds * 1e9) },
        memory: { timestamp: now, workingSetBytes: SIM_CONTAINER_BYTES },
      });
  }
  const nodeSeconds = Math.max(0, now - startedAt) / 1000;
  return {
    node: {
      cpu: {
        timestamp: now,
        usageCoreNanoSeconds:
          Math.round(SIM_NODE_CORES * nodeSeconds * 1e9) +
          containers.reduce((sum, c) => sum + (c.cpu?.usageCoreNanoSeconds ?? 0), 0),
      },
      memory: { timestamp: now, workingSetBytes: SIM_NODE_BYTES + containers.length * SIM_CONTAINER_BYTES },
    },
    containers,
    error: false,
  };
}

/** What the servers need of the simulated nodes. */
export interface SimulatedServersDeps {
  values: AgentValues;
  clientset: Clientset;
  log: Logger;
  /** Node IP → node name. */
  nodes: ReadonlyMap<string, string>;
  /** The pods bound to a node. */
  podsOf(nodeName: string): Pod[];
}

/** The listeners and the HTTPS server behind them. */
export class SimulatedServers {
  private https?: HttpsServer;
  private readonly listeners: NetServer[] = [];
  private readonly startedAt = Date.now();
  private readonly auth: RequestAuth;
  private readonly clientCa: string | undefined;

  /** Reads `--client-ca-file` (throws when it is unreadable). */
  constructor(private readonly d: SimulatedServersDeps) {
    const v = d.values;
    this.clientCa = v.clientCaFile ? readFileSync(v.clientCaFile, 'utf8') : undefined;
    this.auth = new RequestAuth({
      values: v,
      clientset: d.clientset,
      log: d.log,
      ...(this.clientCa ? { clientCa: this.clientCa } : {}),
    });
  }

  /** Binds every node's address (those that fail are logged); resolves with how many are served. */
  async start(): Promise<number> {
    const v = this.d.values;
    const clientCa = this.clientCa;
    const pair = await servingCertKey(v, 'agent-simulated', '127.0.0.1', 'localhost');
    const server = createHttpsServer(
      {
        cert: pair.certPem,
        key: pair.keyPem,
        requestCert: true,
        rejectUnauthorized: false,
        ...(clientCa ? { ca: clientCa } : {}),
      },
      (req, res) => void this.handle(req, res),
    );
    this.https = server;
    let failed = 0;
    await Promise.all(
      [...this.d.nodes.keys()].map(
        (ip) =>
          new Promise<void>((resolve) => {
            const l = createNetServer((socket) => server.emit('connection', socket));
            l.once('error', (err) => {
              if (failed++ === 0)
                this.d.log.warn('A simulated node cannot serve on its address', { ip, port: v.port, err: String(err) });
              resolve();
            });
            l.listen(v.port, ip, () => {
              this.listeners.push(l);
              resolve();
            });
          }),
      ),
    );
    if (failed > 0) this.d.log.warn('Simulated nodes without a server', { count: failed });
    return this.listeners.length;
  }

  /** Closes the listeners and the connections. */
  async stop(): Promise<void> {
    await Promise.all(this.listeners.map((l) => new Promise<void>((r) => l.close(() => r()))));
    this.https?.closeAllConnections();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const nodeName = this.d.nodes.get(req.socket.localAddress ?? '');
      if (!nodeName) {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
        return;
      }
      const user = await this.auth.authenticate(req);
      if (!user) {
        res.writeHead(401, { 'Content-Type': 'text/plain' }).end('Unauthorized');
        return;
      }
      if (!(await this.auth.authorize(user, req, nodeName))) {
        res
          .writeHead(403, { 'Content-Type': 'text/plain' })
          .end(`Forbidden (user=${user.name}, verb=${(req.method ?? 'GET').toLowerCase()}, resource=nodes)`);
        return;
      }
      const path = (req.url ?? '/').split('?')[0];
      if (path === '/healthz') {
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end('ok');
      } else if (path === '/metrics/resource') {
        const summary = simulatedSummary(this.startedAt, this.d.podsOf(nodeName), Date.now());
        res.writeHead(200, { 'Content-Type': PROMETHEUS_TEXT_TYPE }).end(renderResourceMetrics(summary));
      } else {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
      }
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(`Internal Error: ${(err as Error).message}`);
    }
  }
}
