/**
 * Liveness, readiness and startup probes (model: kubelet `prober/prober_manager.go`, `prober/worker.go`,
 * `prober/prober.go`): one worker per container and probe type, each a timer loop that waits
 * `initialDelaySeconds` after the container started, then probes every `periodSeconds` with `timeoutSeconds`, and
 * flips its result after `successThreshold` successes or `failureThreshold` failures in a row. Readiness starts as
 * failure, liveness as success; while a startup probe has not succeeded, liveness and readiness do not run. A changed
 * result calls `onChange(podUid)` so the pod worker syncs (status, or a restart after a liveness failure).
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';

import { type Container, type Pod, type Probe } from '@platform/api';

import { type Runtime } from '../runtime/runtime';

/** The three kinds of probe. */
export type ProbeType = 'liveness' | 'readiness' | 'startup';

/** What one probe attempt found. */
export type ProbeOutcome = 'Success' | 'Failure';

interface Worker {
  key: string;
  podUid: string;
  containerId: string;
  type: ProbeType;
  probe: Probe;
  result: ProbeOutcome | undefined;
  successes: number;
  failures: number;
  timer?: NodeJS.Timeout;
  stopped: boolean;
  /** Message of the last failure, for events. */
  message: string;
}

/** Runs probes; results are read by the pod workers. */
export class ProbeManager {
  private readonly workers = new Map<string, Worker>();

  constructor(
    private readonly runtime: Runtime,
    private readonly onChange: (podUid: string, type: ProbeType, containerName: string, message: string) => void,
  ) {}

  /**
   * Makes sure the probes of a running container run (idempotent). `startedAt` is when the container started (ms).
   * Workers of other container ids of the same pod container are stopped.
   */
  ensure(pod: Pod, c: Container, containerId: string, startedAt: number, podIp: string): void {
    const uid = pod.metadata?.uid ?? '';
    for (const type of ['startup', 'liveness', 'readiness'] as ProbeType[]) {
      const probe = type === 'startup' ? c.startupProbe : type === 'liveness' ? c.livenessProbe : c.readinessProbe;
      const key = `${uid}/${c.name}/${type}`;
      const w = this.workers.get(key);
      if (w && w.containerId === containerId) continue;
      if (w) this.stopWorker(w);
      if (!probe) continue;
      const nw: Worker = {
        key,
        podUid: uid,
        containerId,
        type,
        probe,
        result: type === 'liveness' ? 'Success' : undefined,
        successes: 0,
        failures: 0,
        stopped: false,
        message: '',
      };
      this.workers.set(key, nw);
      const delay = Math.max(0, startedAt + (probe.initialDelaySeconds ?? 0) * 1000 - Date.now());
      nw.timer = setTimeout(() => void this.tick(nw, pod, c, podIp), delay);
    }
  }

  /** Stops every probe of a pod (or of one container of it). */
  stop(podUid: string, containerName?: string): void {
    for (const w of [...this.workers.values()])
      if (w.podUid === podUid && (!containerName || w.key.startsWith(`${podUid}/${containerName}/`)))
        this.stopWorker(w);
  }

  /** Stops everything. */
  close(): void {
    for (const w of [...this.workers.values()]) this.stopWorker(w);
  }

  private stopWorker(w: Worker): void {
    w.stopped = true;
    clearTimeout(w.timer);
    if (this.workers.get(w.key) === w) this.workers.delete(w.key);
  }

  private result(podUid: string, name: string, type: ProbeType, containerId: string): ProbeOutcome | undefined | null {
    const w = this.workers.get(`${podUid}/${name}/${type}`);
    if (!w || w.containerId !== containerId) return null;
    return w.result;
  }

  /** Whether the container has started: no startup probe, or it succeeded. */
  started(podUid: string, name: string, containerId: string): boolean {
    const r = this.result(podUid, name, 'startup', containerId);
    return r === null || r === 'Success';
  }

  /** Whether the container is ready: started, and no readiness probe or it succeeded. */
  ready(podUid: string, name: string, containerId: string): boolean {
    if (!this.started(podUid, name, containerId)) return false;
    const r = this.result(podUid, name, 'readiness', containerId);
    return r === null || r === 'Success';
  }

  /** A failed liveness or startup probe: the reason to restart the container, or undefined. */
  failed(podUid: string, name: string, containerId: string): string | undefined {
    for (const type of ['liveness', 'startup'] as ProbeType[]) {
      const w = this.workers.get(`${podUid}/${name}/${type}`);
      if (w && w.containerId === containerId && w.result === 'Failure')
        return `Container ${name} failed ${type} probe, will be restarted`;
    }
    return undefined;
  }

  private async tick(w: Worker, pod: Pod, c: Container, podIp: string): Promise<void> {
    if (w.stopped) return;
    const p = w.probe;
    const uid = w.podUid;
    const gated = w.type !== 'startup' && !this.started(uid, c.name, w.containerId);
    if (!gated) {
      const { outcome, message } = await this.probeOnce(p, c, w.containerId, podIp);
      if (w.stopped) return;
      if (outcome === 'Success') {
        w.successes++;
        w.failures = 0;
      } else {
        w.failures++;
        w.successes = 0;
        w.message = message;
      }
      const successThreshold = w.type === 'readiness' ? (p.successThreshold ?? 1) : 1;
      const failureThreshold = p.failureThreshold ?? 3;
      let next = w.result;
      if (w.successes >= successThreshold) next = 'Success';
      else if (w.failures >= failureThreshold) next = 'Failure';
      if (next !== w.result) {
        w.result = next;
        this.onChange(uid, w.type, c.name, next === 'Failure' ? message : '');
      }
      // A failed liveness probe leaves the worker in place until the container is replaced; a succeeded startup
      // probe is done.
      if ((w.type === 'liveness' || w.type === 'startup') && w.result === 'Failure') return;
      if (w.type === 'startup' && w.result === 'Success') return;
    }
    w.timer = setTimeout(() => void this.tick(w, pod, c, podIp), (p.periodSeconds ?? 10) * 1000);
  }

  private async probeOnce(
    p: Probe,
    c: Container,
    containerId: string,
    podIp: string,
  ): Promise<{ outcome: ProbeOutcome; message: string }> {
    const timeoutMs = (p.timeoutSeconds ?? 1) * 1000;
    const port = (v: unknown): number => {
      if (typeof v === 'number') return v;
      const n = Number(v);
      if (Number.isInteger(n) && n > 0) return n;
      return (c.ports ?? []).find((x) => x.name === v)?.containerPort ?? 0;
    };
    try {
      if (p.exec) {
        const r = await this.runtime.execSync(containerId, p.exec.command ?? [], p.timeoutSeconds ?? 1);
        return r.exitCode === 0
          ? { outcome: 'Success', message: '' }
          : {
              outcome: 'Failure',
              message:
                `command ${JSON.stringify(p.exec.command)} exited with ${r.exitCode}: ${r.stdout.toString()}${r.stderr.toString()}`.trim(),
            };
      }
      if (p.httpGet) {
        const g = p.httpGet;
        const code = await httpProbe(
          (g.scheme ?? 'HTTP').toUpperCase() === 'HTTPS',
          g.host || podIp || '127.0.0.1',
          port(g.port),
          g.path ?? '/',
          (g.httpHeaders ?? []).map((h) => [h.name, h.value]),
          timeoutMs,
        );
        return code >= 200 && code < 400
          ? { outcome: 'Success', message: '' }
          : { outcome: 'Failure', message: `HTTP probe failed with statuscode: ${code}` };
      }
      if (p.tcpSocket) {
        await tcpProbe(p.tcpSocket.host || podIp || '127.0.0.1', port(p.tcpSocket.port), timeoutMs);
        return { outcome: 'Success', message: '' };
      }
      return { outcome: 'Failure', message: 'probe has no handler' };
    } catch (err) {
      return { outcome: 'Failure', message: (err as Error).message };
    }
  }
}

/** One HTTP GET; resolves with the status code. */
export function httpProbe(
  https: boolean,
  host: string,
  port: number,
  path: string,
  headers: Array<[string, string]>,
  timeoutMs: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const h: Record<string, string> = { 'User-Agent': 'platform-probe/1.21' };
    for (const [k, v] of headers) h[k] = v;
    const req = (https ? httpsRequest : httpRequest)(
      {
        host,
        port,
        path: path.startsWith('/') ? path : `/${path}`,
        method: 'GET',
        headers: h,
        rejectUnauthorized: false,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`Get ${path}: context deadline exceeded`)));
    req.once('error', reject);
    req.end();
  });
}

/** One TCP connect. */
export function tcpProbe(host: string, port: number, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect(port, host);
    s.setTimeout(timeoutMs, () => s.destroy(new Error(`dial tcp ${host}:${port}: i/o timeout`)));
    s.once('connect', () => {
      s.destroy();
      resolve();
    });
    s.once('error', reject);
  });
}
