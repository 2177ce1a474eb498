/**
 * The node agent's servers (model: kubelet `server/server.go`, `server/auth.go`):
 * - the main server on `--address:--port` (HTTPS; `--tls-cert-file`/`--tls-private-key-file`, else a self-signed pair
 *   in `--cert-dir`), with authentication — x509 client certificates of `--client-ca-file`, bearer tokens through the
 *   TokenReview API (`--authentication-token-webhook`), anonymous requests when `--anonymous-auth` — and
 *   authorization — `AlwaysAllow` or `Webhook` (SubjectAccessReview on `nodes/<subresource>` of this node, with the
 *   kubelet's verbs and subresources; answers cached for the two TTLs). It serves `/healthz`, `/pods` and, with
 *   `--enable-debugging-handlers`, `/containerLogs/<ns>/<pod>/<container>`, `/exec`, `/attach` and `/portForward`
 *   (WebSocket, the `v4.channel.k8s.io` channel protocol) and `/run`, and `/metrics/resource` (authorized as
 *   `nodes/metrics`; see `../stats/resource-metrics.ts`);
 * - the read-only server on `--read-only-port` (plain HTTP, no authentication): `/healthz`, `/pods`,
 *   `/metrics/resource`;
 * - the health server on `--healthz-bind-address:--healthz-port`: `/healthz`.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { readFileSync } from 'node:fs';
import { type AddressInfo } from 'node:net';
import { Duplex, PassThrough } from 'node:stream';

import { type Pod } from '@platform/api';
import { type Clientset } from '@platform/client';
import { ensureSelfSignedCertKey, loadCertKeyPair, type Logger } from '@platform/common';
import { WebSocket, WebSocketServer } from 'ws';

import { type Agent } from '../agent';
import { type AgentValues } from '../cmd/options';
import { readCriLog } from '../runtime/cri/logs';
import { LABEL_CONTAINER_NAME, LABEL_POD_UID, type Runtime } from '../runtime/runtime';
import { collectResourceSummary, PROMETHEUS_TEXT_TYPE, renderResourceMetrics } from '../stats/resource-metrics';
import { nodeUsage } from '../stats/usage';
import { RequestAuth } from './auth';
import { SpdyConnection, type SpdyStream } from './spdy';

/** What the servers need. */
export interface AgentServersDeps {
  agent: Agent;
  values: AgentValues;
  runtime: Runtime;
  clientset?: Clientset;
  log: Logger;
}

const CHANNEL_PROTOCOLS = ['v4.channel.k8s.io', 'channel.k8s.io', 'base64.channel.k8s.io'];

/** The health server's handler: `/healthz` answers `ok` while the process serves. */
function handleHealthz(req: IncomingMessage, res: ServerResponse): void {
  if (req.url?.split('?')[0] === '/healthz') {
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end('ok');
    return;
  }
  res.writeHead(404).end('404 page not found\n');
}

/**
 * The health server alone, on `--healthz-bind-address:--healthz-port` (the agent of `--simulate-nodes`, which serves
 * no node of its own, still answers its supervisor's probe); resolves with the bound port and a stop function.
 */
export async function startHealthzServer(host: string, port: number): Promise<{ port: number; stop(): Promise<void> }> {
  const s = createHttpServer(handleHealthz);
  await new Promise<void>((resolve, reject) => {
    s.once('error', reject);
    s.listen(port, host, () => resolve());
  });
  return {
    port: (s.address() as AddressInfo).port,
    stop: () => new Promise<void>((r) => s.close(() => r())),
  };
}

/**
 * The serving certificate of a node's server: `--tls-cert-file`/`--tls-private-key-file`, else a self-signed pair
 * `<pairName>.crt`/`.key` in `--cert-dir` (made on first use) for the node's IP and name, 127.0.0.1 and localhost.
 */
export function servingCertKey(
  v: AgentValues,
  pairName: string,
  nodeIp: string,
  nodeName: string,
): Promise<{ certPem: string; keyPem: string }> {
  if (v.tlsCertFile && v.tlsPrivateKeyFile) return loadCertKeyPair(v.tlsCertFile, v.tlsPrivateKeyFile);
  return ensureSelfSignedCertKey(v.certDir, pairName, {
    host: nodeIp,
    alternateIPs: [nodeIp, '127.0.0.1'],
    alternateDNS: [nodeName, 'localhost'],
  });
}

/** The three servers. */
export class AgentServers {
  private readonly servers: Server[] = [];
  private auth: RequestAuth;
  private clientCa?: string;
  /** Ports actually bound (0 asks the OS), for tests. */
  readonly ports: { main?: number; readOnly?: number; healthz?: number } = {};

  constructor(private readonly d: AgentServersDeps) {
    this.auth = new RequestAuth(d);
  }

  /** Starts every enabled server. Throws when a port cannot be bound or a certificate read. */
  async start(): Promise<void> {
    const v = this.d.values;
    if (v.healthzPort > 0) {
      const s = createHttpServer(handleHealthz);
      this.ports.healthz = await this.listen(s, v.healthzBindAddress, v.healthzPort);
    }
    if (v.readOnlyPort > 0) {
      const s = createHttpServer((req, res) => void this.handle(req, res, true));
      this.ports.readOnly = await this.listen(s, v.address, v.readOnlyPort);
    }
    if (v.enableServer) {
      if (v.clientCaFile) {
        this.clientCa = readFileSync(v.clientCaFile, 'utf8');
        this.auth = new RequestAuth({ ...this.d, clientCa: this.clientCa });
      }
      const pair = await servingCertKey(v, 'agent', this.d.agent.d.nodeIp, this.d.agent.d.nodeName);
      const s = createHttpsServer(
        {
          cert: pair.certPem,
          key: pair.keyPem,
          requestCert: true,
          rejectUnauthorized: false,
          ...(this.clientCa ? { ca: this.clientCa } : {}),
        },
        (req, res) => void this.handle(req, res, false),
      );
      const wss = new WebSocketServer({
        noServer: true,
        handleProtocols: (protocols) => CHANNEL_PROTOCOLS.find((p) => protocols.has(p)) ?? false,
      });
      s.on('upgrade', (req: IncomingMessage, socket, head) => {
        void (async () => {
          const user = await this.auth.authenticate(req);
          if (!user || !(await this.auth.authorize(user, req, this.d.agent.d.nodeName))) {
            socket.end('HTTP/1.1 401 Unauthorized\r\n\r\n');
            return;
          }
          if ((req.headers.upgrade ?? '').toLowerCase() === 'spdy/3.1') {
            if (head.length) socket.unshift(head);
            this.spdy(req, socket);
            return;
          }
          wss.handleUpgrade(req, socket, head, (ws) => void this.stream(req, ws));
        })();
      });
      this.ports.main = await this.listen(s, v.address, v.port);
    }
  }

  private listen(s: Server, host: string, port: number): Promise<number> {
    this.servers.push(s);
    return new Promise((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, host, () => resolve((s.address() as AddressInfo).port));
    });
  }

  /** Stops every server. */
  async stop(): Promise<void> {
    await Promise.all(
      this.servers.map(
        (s) =>
          new Promise<void>((r) => {
            s.close(() => r());
            s.closeAllConnections?.();
          }),
      ),
    );
  }

  // --- handlers ---

  private async handle(req: IncomingMessage, res: ServerResponse, readOnly: boolean): Promise<void> {
    try {
      if (!readOnly) {
        const user = await this.auth.authenticate(req);
        if (!user) {
          res.writeHead(401, { 'Content-Type': 'text/plain' }).end('Unauthorized');
          return;
        }
        if (!(await this.auth.authorize(user, req, this.d.agent.d.nodeName))) {
          res
            .writeHead(403, { 'Content-Type': 'text/plain' })
            .end(`Forbidden (user=${user.name}, verb=${(req.method ?? 'GET').toLowerCase()}, resource=nodes)`);
          return;
        }
      }
      const url = new URL(req.url ?? '/', 'http://agent');
      const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
      if (url.pathname === '/healthz') {
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end('ok');
        return;
      }
      if (url.pathname === '/pods' || url.pathname === '/pods/') {
        const body = { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: this.d.agent.pods() };
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
        return;
      }
      if (url.pathname === '/metrics/resource') {
        const summary = await collectResourceSummary(this.d.runtime, () => nodeUsage());
        res.writeHead(200, { 'Content-Type': PROMETHEUS_TEXT_TYPE }).end(renderResourceMetrics(summary));
        return;
      }
      if (!readOnly && this.d.values.enableDebuggingHandlers && parts[0] === 'containerLogs' && parts.length === 4) {
        await this.containerLogs(parts[1]!, parts[2]!, parts[3]!, url, req, res);
        return;
      }
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(`Internal Error: ${(err as Error).message}`);
    }
  }

  private async containerOf(pod: Pod, container: string, previous: boolean) {
    const uid = pod.metadata?.uid ?? '';
    const list = (await this.d.runtime.listContainers({ labelSelector: { [LABEL_POD_UID]: uid } }))
      .filter((c) => c.labels[LABEL_CONTAINER_NAME] === container)
      .sort((a, b) => b.createdAt - a.createdAt);
    const c = list[previous ? 1 : 0];
    return c ? this.d.runtime.containerStatus(c.id) : undefined;
  }

  private async containerLogs(
    ns: string,
    name: string,
    container: string,
    url: URL,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const pod = this.d.agent.podByName(ns, name);
    if (!pod) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end(`pod ${ns}/${name} not found`);
      return;
    }
    const q = url.searchParams;
    const previous = q.get('previous') === 'true';
    const st = await this.containerOf(pod, container, previous);
    if (!st) {
      res
        .writeHead(400, { 'Content-Type': 'text/plain' })
        .end(
          previous
            ? `previous terminated container "${container}" in pod "${name}" not found`
            : `container "${container}" in pod "${name}" is waiting to start`,
        );
      return;
    }
    const ac = new AbortController();
    req.once('close', () => ac.abort());
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' });
    const since = q.get('sinceSeconds');
    const sinceTime = q.get('sinceTime');
    await readCriLog(
      st.logPath,
      (chunk) => {
        res.write(chunk);
      },
      {
        ...(q.get('tailLines') ? { tailLines: Number(q.get('tailLines')) } : {}),
        ...(since ? { sinceTimeMs: Date.now() - Number(since) * 1000 } : {}),
        ...(sinceTime ? { sinceTimeMs: Date.parse(sinceTime) } : {}),
        ...(q.get('limitBytes') ? { limitBytes: Number(q.get('limitBytes')) } : {}),
        timestamps: q.get('timestamps') === 'true',
        follow: q.get('follow') === 'true',
        isDone: async () =>
          (await this.d.runtime.containerStatus(st.id).catch(() => undefined))?.state !== 'CONTAINER_RUNNING',
        signal: ac.signal,
      },
    );
    res.end();
  }

  /** `/exec`, `/attach`, `/portForward` over a WebSocket with the channel protocol. */
  private async stream(req: IncomingMessage, ws: WebSocket): Promise<void> {
    const target = this.streamTarget(req);
    const base64 = ws.protocol === 'base64.channel.k8s.io';
    const send = (ch: number, data: Buffer | string): void => {
      if (ws.readyState !== WebSocket.OPEN) return;
      const b = Buffer.isBuffer(data) ? data : Buffer.from(data);
      if (base64) ws.send(String(ch) + b.toString('base64'));
      else ws.send(Buffer.concat([Buffer.from([ch]), b]));
    };
    const ac = new AbortController();
    ws.once('close', () => ac.abort());
    const stdin = new PassThrough();
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const b = isBinary ? data : Buffer.from(data.toString().slice(1), 'base64');
      const ch = isBinary ? b[0] : Number(data.toString()[0]);
      if (ch === 0) stdin.write(b.subarray(1));
    });
    if (target.kind === 'portForward' && target.pod) {
      const port = Number(target.url.searchParams.get('port'));
      const portBytes = Buffer.alloc(2);
      portBytes.writeUInt16LE(port);
      send(0, portBytes);
      send(1, portBytes);
      const err = await this.forward(
        target.pod,
        port,
        stdin,
        (b) => send(0, b),
        () => {},
      );
      if (err) send(1, err);
    } else {
      await this.execOrAttach(target, { stdin, signal: ac.signal, send: (ch, b) => send(ch, b) });
    }
    ws.close();
  }

  /** The pod and request of a streaming path `/<kind>/<ns>/<pod>[/<container>]`. */
  private streamTarget(req: IncomingMessage): { kind: string; pod?: Pod; container?: string; url: URL } {
    const url = new URL(req.url ?? '/', 'http://agent');
    const [kind = '', ns, name, container] = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const pod = ns && name ? this.d.agent.podByName(ns, name) : undefined;
    return { kind, url, ...(pod ? { pod } : {}), ...(container ? { container } : {}) };
  }

  /**
   * Runs an exec or attach: channel 1 is stdout, 2 stderr, 3 the final Status (v4: Success, or the exit code as
   * `NonZeroExitCode`).
   */
  private async execOrAttach(
    target: { kind: string; pod?: Pod; container?: string; url: URL },
    io: { stdin: PassThrough; signal: AbortSignal; send: (ch: number, b: Buffer | string) => void },
  ): Promise<void> {
    const status = (code: number, message: string): void => {
      const s =
        code === 0
          ? { metadata: {}, status: 'Success' }
          : {
              metadata: {},
              status: 'Failure',
              message,
              reason: code > 0 ? 'NonZeroExitCode' : 'InternalError',
              details: code > 0 ? { causes: [{ reason: 'ExitCode', message: String(code) }] } : {},
            };
      io.send(3, JSON.stringify(s));
    };
    const { kind, pod, url } = target;
    if (!this.d.values.enableDebuggingHandlers || !pod || !['exec', 'attach'].includes(kind)) {
      status(-1, pod ? 'not found' : 'pod not found');
      return;
    }
    try {
      const container = target.container ?? url.searchParams.get('container') ?? pod.spec?.containers[0]?.name ?? '';
      const st = await this.containerOf(pod, container, false);
      if (!st) throw new Error(`container ${container} not found`);
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      stdout.on('data', (b: Buffer) => io.send(1, b));
      stderr.on('data', (b: Buffer) => io.send(2, b));
      const q = url.searchParams;
      const flags = {
        tty: q.get('tty') === 'true' || q.get('tty') === '1',
        stdin: q.get('input') === '1' || q.get('stdin') === 'true',
        stdout: q.get('output') !== '0' && q.get('stdout') !== 'false',
        stderr: q.get('error') !== '0' && q.get('stderr') !== 'false',
      };
      const streams = { stdin: io.stdin, stdout, stderr, tty: flags.tty, signal: io.signal };
      if (kind === 'exec') {
        if (!this.d.runtime.exec) throw new Error('exec is not supported by this runtime');
        const code = await this.d.runtime.exec({ containerId: st.id, cmd: q.getAll('command'), ...flags }, streams);
        status(code, `command terminated with non-zero exit code: ${code}`);
      } else {
        if (!this.d.runtime.attach) throw new Error('attach is not supported by this runtime');
        await this.d.runtime.attach({ containerId: st.id, ...flags }, streams);
        status(0, '');
      }
    } catch (err) {
      status(-1, (err as Error).message);
    }
  }

  /**
   * Forwards one connection to `port` of the pod: what `input` carries goes to the port, what comes back to
   * `output`; `done` when the port's side closed. Resolves with an error message, or undefined.
   */
  private async forward(
    pod: Pod,
    port: number,
    input: NodeJS.ReadableStream,
    output: (b: Buffer) => void,
    done: () => void,
  ): Promise<string | undefined> {
    const rw = new Duplex({
      read() {},
      write(chunk: Buffer, _enc, cb) {
        output(chunk);
        cb();
      },
      final(cb) {
        done();
        cb();
      },
    });
    input.on('data', (b: Buffer) => rw.push(b));
    input.on('end', () => rw.push(null));
    try {
      const sandbox = (
        await this.d.runtime.listPodSandboxes({ labelSelector: { [LABEL_POD_UID]: pod.metadata?.uid ?? '' } })
      )[0];
      if (!sandbox || !this.d.runtime.portForward) throw new Error('port forwarding is not supported by this runtime');
      await this.d.runtime.portForward(sandbox.id, port, rw);
      return undefined;
    } catch (err) {
      return `an error occurred forwarding ${port} -> ${port}: ${(err as Error).message}`;
    }
  }

  /**
   * `/exec`, `/attach` (`v4.channel.k8s.io`) and `/portForward` (`portforward.k8s.io`) over SPDY/3.1, as kubectl
   * 1.20 and older ask for them.
   */
  private spdy(req: IncomingMessage, socket: Duplex): void {
    const target = this.streamTarget(req);
    const offered = (req.headers['x-stream-protocol-version'] ?? '')
      .toString()
      .split(',')
      .map((p) => p.trim());
    const protocol = target.kind === 'portForward' ? 'portforward.k8s.io' : 'v4.channel.k8s.io';
    if (!offered.includes(protocol) || !target.pod || !this.d.values.enableDebuggingHandlers) {
      const why = !target.pod ? 'pod not found' : `only ${protocol} is supported over SPDY`;
      socket.end(
        `HTTP/1.1 ${target.pod ? 403 : 404} Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(why)}\r\nConnection: close\r\n\r\n${why}`,
      );
      return;
    }
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${protocol}\r\n\r\n`,
    );
    const pod = target.pod;
    if (target.kind === 'portForward') {
      // Each forwarded connection is a pair of streams (error, data) with the same requestid and port.
      const errors = new Map<string, SpdyStream>();
      const conn = new SpdyConnection(socket, (s) => {
        const id = s.headers.requestid ?? '';
        if (s.headers.streamtype === 'error') {
          errors.set(id, s);
          return;
        }
        if (s.headers.streamtype !== 'data') return;
        const input = new PassThrough();
        s.onData((b) => input.write(b));
        s.onEnd(() => input.end());
        void this.forward(
          pod,
          Number(s.headers.port),
          input,
          (b) => s.write(b),
          () => s.end(),
        ).then((err) => {
          s.end();
          const e = errors.get(id);
          errors.delete(id);
          e?.end(err);
        });
      });
      conn.onClose(() => errors.clear());
      return;
    }
    // Exec and attach: the client opens error, then stdin, stdout, stderr as asked (resize with a TTY).
    const q = target.url.searchParams;
    const tty = q.get('tty') === '1' || q.get('tty') === 'true';
    const expected = new Set(['error']);
    if (q.get('input') === '1' || q.get('stdin') === 'true') expected.add('stdin');
    if (q.get('output') === '1' || q.get('stdout') === 'true') expected.add('stdout');
    if ((q.get('error') === '1' || q.get('stderr') === 'true') && !tty) expected.add('stderr');
    if (tty) expected.add('resize');
    const streams = new Map<string, SpdyStream>();
    const ac = new AbortController();
    const timer = setTimeout(() => conn.close(), 30_000);
    const conn = new SpdyConnection(socket, (s) => {
      streams.set(s.headers.streamtype ?? '', s);
      if (![...expected].every((t) => streams.has(t))) return;
      clearTimeout(timer);
      const stdin = new PassThrough();
      const input = streams.get('stdin');
      if (input) {
        input.onData((b) => stdin.write(b));
        input.onEnd(() => stdin.end());
      }
      const channel: Record<number, string> = { 1: 'stdout', 2: 'stderr', 3: 'error' };
      void this.execOrAttach(target, {
        stdin,
        signal: ac.signal,
        send: (ch, b) => streams.get(channel[ch] ?? '')?.write(b),
      }).then(() => {
        for (const t of ['stdout', 'stderr', 'error']) streams.get(t)?.end();
        conn.close();
      });
    });
    conn.onClose(() => {
      clearTimeout(timer);
      ac.abort();
    });
  }
}
