/**
 * The daemons of a local cluster as child processes: each writes to its own log file, is probed until it is
 * healthy, and is started again (with back-off) when it exits on its own — as systemd's `Restart=always` does for
 * the units of `deploy/systemd/`; a controller manager or scheduler that loses its lease exits by design. etcd members
 * are not restarted: their loss stops the cluster. With restarts turned off (failure drills: a killed node agent must
 * stay dead), a daemon that exits stays down, and only an essential one's exit stops the cluster.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { setPriority } from 'node:os';
import { createSecureContext } from 'node:tls';
import { join } from 'node:path';

/** How a daemon is started and probed. */
export interface DaemonSpec {
  /** Unique in the cluster (`apiserver`, `apiserver-2`, `controller-manager`, `node-agent`). */
  name: string;
  /** Stop order: lower ranks stop later (etcd 0, API servers 1, the rest 2). */
  rank: number;
  /** A Node.js script, or an executable when `exec` is set. */
  bin: string;
  exec?: boolean;
  args: string[];
  /**
   * The health URL (200 = healthy); HTTPS is not verified (local daemons with self-signed certificates). Without one,
   * a running process counts as healthy.
   */
  health?: string;
  /** Restarted when it exits on its own. */
  restart: boolean;
  /** When not restarted, its exit stops the cluster (etcd, the only API server). */
  essential: boolean;
  /** Its CPU priority (nice value, 0 to 19) when it should give way to the others (the metrics server). */
  nice?: number;
}

/** A supervised daemon. */
export interface Daemon {
  spec: DaemonSpec;
  child?: ChildProcess;
  logFile: string;
  restarts: number;
  /** How many times it exited (a required daemon's wait for health ends when it exits before it is healthy). */
  exits: number;
  /** When its current process was started (ms since the epoch). */
  spawnedAt?: number;
}

const MAX_RESTART_BACKOFF_MS = 30_000;
/** How long after a daemon's process starts it is first probed. */
const FIRST_PROBE_AFTER_MS = 500;

/**
 * The probes' connections, kept open between probes, and one TLS secure context for all of them: a daemon is probed
 * every 50 ms until it is healthy, and a new TLS connection each time, each with a secure context of its own (made
 * before the connection is even refused), cost the launcher about a CPU-second of a start. Idle connections do not
 * keep the process alive.
 */
let agents: { http: HttpAgent; https: HttpsAgent } | undefined;

/** Whether a GET of `url` answers 200 within 2 s. */
export function probe(url: string): Promise<boolean> {
  agents ??= {
    http: new HttpAgent({ keepAlive: true }),
    https: new HttpsAgent({ keepAlive: true, rejectUnauthorized: false, secureContext: createSecureContext() }),
  };
  const https = url.startsWith('https:');
  return new Promise((done) => {
    const req = (https ? httpsRequest : httpRequest)(
      url,
      { rejectUnauthorized: false, timeout: 2000, agent: https ? agents!.https : agents!.http },
      (res) => {
        res.resume();
        done(res.statusCode === 200);
      },
    );
    req.on('error', () => done(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** Whether `port` can be listened on at `host`. */
export function portFree(port: number, host: string): Promise<boolean> {
  return new Promise((done) => {
    const srv = createServer();
    srv.once('error', () => done(false));
    srv.listen(port, host, () => srv.close(() => done(true)));
  });
}

/** `preferred` when it is free on 127.0.0.1, else (or when it is 0) a port the OS picks. */
export async function pickPort(preferred: number, taken: Set<number>): Promise<number> {
  if (preferred && !taken.has(preferred) && (await portFree(preferred, '127.0.0.1'))) {
    taken.add(preferred);
    return preferred;
  }
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = createServer();
      srv.once('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const a = srv.address();
        const p = typeof a === 'object' && a ? a.port : 0;
        srv.close(() => resolve(p));
      });
    });
    if (!taken.has(port)) {
      taken.add(port);
      return port;
    }
  }
}

/** Runs daemons, restarts them, stops them in order. */
export class Supervisor {
  readonly daemons = new Map<string, Daemon>();
  private stopping = false;
  private fatal?: (why: string) => void;
  private changed?: () => void;
  private readonly logs = new Map<string, WriteStream>();

  constructor(
    private readonly logDir: string,
    /** Hears of exits and restarts (the launcher prints them). */
    private readonly say: (line: string) => void,
  ) {
    mkdirSync(logDir, { recursive: true });
    process.on('exit', () => {
      for (const d of this.daemons.values()) if (running(d.child)) d.child?.kill('SIGKILL');
    });
  }

  /** Called once when a daemon that is not restarted exits unexpectedly. */
  onFatal(f: (why: string) => void): void {
    this.fatal = f;
  }

  /** Called whenever a daemon's process starts or exits (the launcher keeps `cluster.json`'s process ids current). */
  onChange(f: () => void): void {
    this.changed = f;
  }

  /** Starts a daemon (its log file is appended to). */
  start(spec: DaemonSpec): Daemon {
    const d: Daemon = { spec, logFile: join(this.logDir, `${spec.name}.log`), restarts: 0, exits: 0 };
    this.daemons.set(spec.name, d);
    this.spawn(d);
    return d;
  }

  private log(d: Daemon): WriteStream {
    let s = this.logs.get(d.spec.name);
    if (!s) {
      s = createWriteStream(d.logFile, { flags: 'a' });
      this.logs.set(d.spec.name, s);
    }
    return s;
  }

  private spawn(d: Daemon): void {
    const { spec } = d;
    const out = this.log(d);
    out.write(`--- ${new Date().toISOString()} starting ${spec.name}: ${spec.bin} ${spec.args.join(' ')}\n`);
    // Its own process group: a terminal's Ctrl-C reaches only the launcher, which stops the daemons once, in order
    // (a second signal would make a daemon exit at once).
    const child = spec.exec
      ? spawn(spec.bin, spec.args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true })
      : spawn(process.execPath, [spec.bin, ...spec.args], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    d.child = child;
    d.spawnedAt = Date.now();
    if (spec.nice && child.pid !== undefined)
      try {
        setPriority(child.pid, spec.nice);
      } catch {
        // not allowed here: it runs at the launcher's priority
      }
    child.stdout?.pipe(out, { end: false });
    child.stderr?.pipe(out, { end: false });
    const started = Date.now();
    child.on('error', (err) => out.write(`--- could not start ${spec.name}: ${err.message}\n`));
    this.changed?.();
    child.on('exit', (code, signal) => {
      out.write(`--- ${new Date().toISOString()} ${spec.name} exited (${signal ?? `code ${String(code)}`})\n`);
      d.exits++;
      if (this.stopping || d.child !== child) return;
      this.changed?.();
      const how = signal ?? `code ${String(code)}`;
      if (!spec.restart) {
        if (spec.essential) this.fatal?.(`${spec.name} exited unexpectedly (${how}); see ${d.logFile}`);
        else this.say(`${spec.name} exited (${how}); not restarted (restarts are off) (log: ${d.logFile})`);
        return;
      }
      // Back-off doubles per quick failure, and starts over after a run of a minute or more.
      if (Date.now() - started > 60_000) d.restarts = 0;
      const delay = Math.min(MAX_RESTART_BACKOFF_MS, 1000 * 2 ** d.restarts);
      d.restarts++;
      this.say(`${spec.name} exited (${how}); restarting in ${delay / 1000}s (log: ${d.logFile})`);
      setTimeout(() => {
        if (!this.stopping) this.spawn(d);
      }, delay).unref();
    });
  }

  /**
   * Waits until the daemon's health URL answers 200; false when `timeoutMs` passed, or it exited and is not restarted,
   * or (`failOnExit`: a daemon the cluster cannot start without) it exited at all. Polled every 50 ms: a probe is a
   * connection to 127.0.0.1, and each daemon's start is on the path to the cluster's readiness.
   */
  async waitHealthy(name: string, timeoutMs: number, failOnExit = false): Promise<boolean> {
    const d = this.daemons.get(name);
    if (!d) return false;
    const exits = d.exits;
    const deadline = Date.now() + timeoutMs;
    // No daemon answers sooner than its modules are loaded (a CPU-second or so): the probes of a daemon that is not
    // listening yet (each a refused connection and its error) start a moment after its process does.
    const wait = (d.spawnedAt ?? 0) + FIRST_PROBE_AFTER_MS - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    while (!this.stopping && Date.now() < deadline) {
      if (d.spec.health ? await probe(d.spec.health) : running(d.child)) return true;
      if (failOnExit ? d.exits > exits : !d.spec.restart && d.child && !running(d.child)) return false;
      await new Promise((r) => setTimeout(r, 50));
    }
    return false;
  }

  /** From now on nothing is restarted and no wait for health goes on (the cluster is stopping). */
  beginStop(): void {
    this.stopping = true;
  }

  /**
   * Stops every daemon: SIGTERM to the highest rank first, waiting for each rank to exit (SIGKILL after
   * `graceMs`) before the next, so that the API server outlives its clients and etcd outlives the API servers.
   */
  async stopAll(graceMs = 30_000): Promise<void> {
    this.stopping = true;
    const ranks = [...new Set([...this.daemons.values()].map((d) => d.spec.rank))].sort((a, b) => b - a);
    for (const rank of ranks) {
      const group = [...this.daemons.values()].filter((d) => d.spec.rank === rank && running(d.child));
      await Promise.all(group.map((d) => stopChild(d.child!, graceMs)));
    }
    await Promise.all([...this.logs.values()].map((s) => new Promise<void>((resolve) => s.end(() => resolve()))));
  }
}

function running(child: ChildProcess | undefined): child is ChildProcess {
  return !!child && child.exitCode === null && child.signalCode === null;
}

function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (!running(child)) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
