/**
 * What the API server benchmarks share (`server/*.bench.ts`): the server as a child process (the `platform-apiserver`
 * command, compiled or from its sources) waited for until ready, a keep-alive HTTPS client, and progress lines.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { type ClientHttp2Session, connect as http2Connect } from 'node:http2';
import { Agent, request as httpsRequest } from 'node:https';
import { join, resolve } from 'node:path';

/** A response: status and body (the body is parsed by the caller when it needs to). */
export interface BenchResponse {
  status: number;
  body: Buffer;
}

/**
 * `BENCH_HTTP=2`: the benchmark clients speak HTTP/2, every request of a client multiplexed on one connection (as
 * client-go and kubectl do); otherwise HTTP/1.1 on keep-alive connections.
 */
export const BENCH_HTTP2 = process.env.BENCH_HTTP === '2';

/** One HTTP/2 connection shared by a client and its `as()` copies, opened again when the server closes it. */
class Http2Connection {
  private session: ClientHttp2Session | undefined;

  constructor(
    private readonly url: string,
    private readonly ca: string,
  ) {}

  get(): ClientHttp2Session {
    if (!this.session || this.session.closed || this.session.destroyed) {
      this.session = http2Connect(this.url, { ca: this.ca });
      this.session.on('error', () => (this.session = undefined));
    }
    return this.session;
  }

  close(): void {
    this.session?.close();
  }
}

/**
 * An HTTPS client of the server, as one user (a bearer token): a keep-alive agent of `sockets` connections, or one
 * HTTP/2 connection with {@link BENCH_HTTP2}.
 */
export class BenchClient {
  private readonly agent: Agent;
  private readonly h2: Http2Connection | undefined;
  private readonly ca: string;
  /** Connections of the watches over HTTP/1.1: one each, never pooled. */
  private watchAgent: Agent | undefined;

  constructor(
    readonly url: string,
    ca: string | Agent,
    sockets: number,
    private readonly token?: string,
    h2?: Http2Connection,
  ) {
    this.agent = ca instanceof Agent ? ca : new Agent({ keepAlive: true, maxSockets: sockets, ca });
    this.ca = typeof ca === 'string' ? ca : String(ca.options.ca ?? '');
    this.h2 = h2 ?? (BENCH_HTTP2 && typeof ca === 'string' ? new Http2Connection(url, ca) : undefined);
  }

  private headers(payload: Buffer | undefined, contentType = 'application/json'): Record<string, string> {
    return {
      ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
      ...(payload ? { 'content-type': contentType, 'content-length': String(payload.length) } : {}),
    };
  }

  /**
   * A GET whose body is counted and dropped as it arrives (a list of 50 MB costs the client no buffer and no
   * parse, so that the server's time is what is measured).
   */
  drain(path: string): Promise<{ status: number; bytes: number }> {
    return new Promise((resolvePromise, reject) => {
      let bytes = 0;
      if (this.h2) {
        const stream = this.h2.get().request({ ':method': 'GET', ':path': path, ...this.headers(undefined) });
        let status = 0;
        stream.on('response', (h) => (status = Number(h[':status'])));
        stream.on('data', (c: Buffer) => (bytes += c.length));
        stream.on('end', () => resolvePromise({ status, bytes }));
        stream.on('error', reject);
        stream.end();
        return;
      }
      const req = httpsRequest(`${this.url}${path}`, { agent: this.agent, headers: this.headers(undefined) }, (res) => {
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, bytes }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  }

  /**
   * A watch (`path` holds `watch=1`): resolves once the server answered 200, then calls `onLine` with each line
   * of the stream and the time it arrived (`process.hrtime`, ns: the same clock in every process of the machine).
   * Over HTTP/2 the watch is one more stream of the client's connection; over HTTP/1.1 it has a connection of its own.
   */
  watch(path: string, onLine: (line: string, atNs: number) => void): Promise<{ stop(): void }> {
    return new Promise((resolvePromise, reject) => {
      let buf = '';
      const onData = (chunk: Buffer): void => {
        const atNs = Number(process.hrtime.bigint());
        buf += chunk.toString('utf8');
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line) onLine(line, atNs);
        }
      };
      if (this.h2) {
        const stream = this.h2.get().request({ ':method': 'GET', ':path': path, ...this.headers(undefined) });
        stream.on('response', (h) => {
          const status = Number(h[':status']);
          if (status === 200) resolvePromise({ stop: () => stream.close() });
          else reject(new Error(`watch ${path}: ${status}`));
        });
        stream.on('data', onData);
        stream.on('error', (err) => reject(err));
        stream.end();
        return;
      }
      this.watchAgent ??= new Agent({ keepAlive: false, ca: this.ca });
      const req = httpsRequest(
        `${this.url}${path}`,
        { agent: this.watchAgent, headers: this.headers(undefined) },
        (res) => {
          if (res.statusCode !== 200) {
            reject(new Error(`watch ${path}: ${res.statusCode}`));
            res.resume();
            return;
          }
          resolvePromise({ stop: () => req.destroy() });
          res.on('data', onData);
          res.on('error', () => {});
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  /** The same connections, as the user of `token`. */
  as(token: string): BenchClient {
    return new BenchClient(this.url, this.agent, 0, token, this.h2);
  }

  /** `contentType` of the body: JSON unless given (a merge patch, say). */
  request(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<BenchResponse> {
    if (this.h2) return this.request2(this.h2.get(), method, path, body, contentType);
    return new Promise((resolvePromise, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const req = httpsRequest(
        `${this.url}${path}`,
        { method, agent: this.agent, headers: this.headers(payload, contentType) },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  private request2(
    session: ClientHttp2Session,
    method: string,
    path: string,
    body: unknown,
    contentType: string,
  ): Promise<BenchResponse> {
    return new Promise((resolvePromise, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const stream = session.request({
        ':method': method,
        ':path': path,
        ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
        ...(payload ? { 'content-type': contentType } : {}),
      });
      let status = 0;
      const chunks: Buffer[] = [];
      stream.on('response', (h) => (status = Number(h[':status'])));
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => resolvePromise({ status, body: Buffer.concat(chunks) }));
      stream.on('error', reject);
      stream.end(payload);
    });
  }

  /** `request`, failing unless the status is `want`. */
  async expect(want: number, method: string, path: string, body?: unknown): Promise<BenchResponse> {
    const r = await this.request(method, path, body);
    if (r.status !== want) {
      throw new Error(`${method} ${path}: ${r.status}, want ${want}: ${r.body.toString('utf8').slice(0, 400)}`);
    }
    return r;
  }

  close(): void {
    this.h2?.close();
    this.agent.destroy();
    this.watchAgent?.destroy();
  }
}

const started = performance.now();
/** Progress on stderr, so that a slow step shows where it is. */
export function step(what: string): void {
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1)}s] ${what}\n`);
}

/** Resident set sizes in MiB (VmHWM: the peak, VmRSS: now). */
export interface ServerMemory {
  /** The sum of every process's peak (at least the peak of the whole, which /proc does not give). */
  peakMiB: number;
  currentMiB: number;
  processes: { pid: number; peakMiB: number; currentMiB: number }[];
}

/** `pid` and its children (one level: the server processes a primary forks), from /proc. */
function processTree(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The fields after the command name (in parentheses, which may hold spaces): state, ppid, ...
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return [pid, ...children];
}

/** Clock ticks a second of /proc/<pid>/stat's times (`getconf CLK_TCK`; 100 on Linux unless told otherwise). */
const clockTicks = ((): number => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds (user + system) `pid` has used so far; 0 when it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command name: state (field 3), ..., utime (14), stime (15).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks;
  } catch {
    return 0;
  }
}

/**
 * CPU seconds of this process's children that have exited and been reaped (`cutime` + `cstime` of /proc/self/stat):
 * the runs of a compiled load generator (wrk) so far.
 */
export function childrenCpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // After the command name: state (field 3), ..., cutime (16), cstime (17).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / clockTicks;
}

/** CPU seconds of `pid` and its children (a server and the server processes it forked). */
export function treeCpuSeconds(pid: number): number {
  return processTree(pid).reduce((a, p) => a + cpuSeconds(p), 0);
}

/** The children of this process running the command `comm` (`etcd`, say), from /proc. */
export function childrenNamed(comm: string): number[] {
  return processTree(process.pid)
    .slice(1)
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/comm`, 'utf8').trim() === comm;
      } catch {
        return false;
      }
    });
}

/** The memory of `pid` and its children (see {@link ServerMemory}). */
export function treeMemory(pid: number): ServerMemory {
  const processes = processTree(pid).flatMap((p) => {
    try {
      const status = readFileSync(`/proc/${p}/status`, 'utf8');
      const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
      return [{ pid: p, peakMiB: kb('VmHWM') / 1024, currentMiB: kb('VmRSS') / 1024 }];
    } catch {
      return [];
    }
  });
  const sum = (f: (p: ServerMemory['processes'][number]) => number): number => processes.reduce((a, p) => a + f(p), 0);
  return { peakMiB: sum((p) => p.peakMiB), currentMiB: sum((p) => p.currentMiB), processes };
}

/** The API server in a child process. */
export interface ServerProcess {
  child: ChildProcess;
  url: string;
  ca: string;
  /**
   * Peak and current resident set size of the child and of its own children (the server processes of
   * `--server-processes`), from /proc/<pid>/status, in MiB: the sums, and each process's.
   */
  memory(): ServerMemory;
  stop(): Promise<void>;
}

const packageRoot = resolve(__dirname, '..', '..');

/**
 * Starts `platform-apiserver` with `args` (which name its `--secure-port` and `--cert-dir`) and waits until `/readyz`
 * answers 200 (as `readyToken` when given). Compiled: the command itself. From sources: main.ts through the
 * TypeScript hook the SQLite writer also uses, with the heap setting of the command (bin/platform-apiserver).
 * BENCH_SERVER_NODE_ARGS adds options to the server's Node (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`);
 * BENCH_SERVER_STDOUT names a file the server's stdout is appended to (e.g. for `--trace-gc`), else it is dropped.
 */
export async function startServerProcess(o: {
  args: string[];
  port: number;
  certDir: string;
  readyTimeoutMs: number;
  readyToken?: string;
}): Promise<ServerProcess> {
  const compiled = __filename.endsWith('.js');
  const nodeArgs = compiled
    ? [join(packageRoot, 'bin', 'platform-apiserver'), ...o.args]
    : [
        '-r',
        join(packageRoot, 'src', 'storage', 'testing', 'ts-register.js'),
        '-e',
        `require('node:v8').setFlagsFromString('--heap-growing-percent=50');` +
          `require(${JSON.stringify(join(packageRoot, 'src', 'cmd', 'main.ts'))}).main(process.argv.slice(1)).then((c) => process.exit(c))`,
        '--',
        ...o.args,
      ];
  const nodeOptions = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const stdout = process.env.BENCH_SERVER_STDOUT ? openSync(process.env.BENCH_SERVER_STDOUT, 'a') : 'ignore';
  const child = spawn(process.execPath, [...nodeOptions, ...nodeArgs], { stdio: ['ignore', stdout, 'pipe'] });
  if (typeof stdout === 'number') closeSync(stdout);
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = `https://127.0.0.1:${o.port}`;
  const deadline = Date.now() + o.readyTimeoutMs;
  let ca = '';
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the API server exited with ${child.exitCode}: ${stderr}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the API server did not become ready within ${o.readyTimeoutMs / 1000}s: ${stderr}`);
    }
    const crt = join(o.certDir, 'apiserver.crt');
    if (!ca && existsSync(crt)) ca = readFileSync(crt, 'utf8');
    if (ca) {
      const probe = new BenchClient(url, ca, 1, o.readyToken);
      const ok = await probe.request('GET', '/readyz').then(
        (r) => r.status === 200,
        () => false,
      );
      probe.close();
      if (ok) break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const memory = (): ServerMemory => treeMemory(child.pid!);
  return {
    child,
    url,
    ca,
    memory,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
