/**
 * The load generator of the API server benchmark: several Node child processes, each with its own event loop and
 * its own keep-alive connections (or one HTTP/2 connection with BENCH_HTTP=2), so that the clients can use every CPU
 * and are not the bottleneck of what they measure; their pids let the benchmark report the CPU they used.
 *
 * The parent ({@link LoadGenerator}) sends each worker a job over the IPC channel and gets its result back: a run of
 * requests (creates, gets, lists: the latency of each), lists in a loop for a while, watches whose event times are
 * reported, or raw `Store.create` calls on a store the worker opens itself. Times are `process.hrtime` in ns, the
 * same monotonic clock in every process of the machine, so a write sent by one process and the event read by another
 * give a latency.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { join, resolve } from 'node:path';
import { connect as tlsConnect, createSecureContext, type SecureContext } from 'node:tls';

import { BENCH_HTTP2, BenchClient } from './bench-server';

/** How the worker reaches the server: its URL, CA, bearer token and its number of connections. */
export interface LoadTarget {
  url: string;
  ca: string;
  token: string;
  connections: number;
}

/**
 * Requests `i` for `i` in `from, from + step, ... < to`, `concurrency` at a time. `{name}` in `path` and a body's
 * `metadata.name` become `namePrefix` + `i % modulo` padded to 6 digits. `drain`: the body is counted, not kept.
 */
export interface RequestsJob {
  kind: 'requests';
  target: LoadTarget;
  method: string;
  path: string;
  body?: { metadata: Record<string, unknown> } & Record<string, unknown>;
  namePrefix: string;
  modulo?: number;
  from: number;
  to: number;
  step: number;
  concurrency: number;
  expect: number;
  drain?: boolean;
}

/** Each path listed by one client, one list after another, until `durationMs` has passed. */
export interface ListLoopJob {
  kind: 'listLoop';
  target: LoadTarget;
  paths: string[];
  durationMs: number;
}

/** Opens `watchers` watches on `path`; see {@link LoadGenerator.watch}. */
export interface WatchJob {
  kind: 'watch';
  target: LoadTarget;
  path: string;
  watchers: number;
}

/** Raw `Store.create` calls, as {@link RequestsJob} numbers them, with a value of `valueBytes`. */
export interface RawJob {
  kind: 'raw';
  store: { kind: 'etcd'; endpoints: string[] } | { kind: 'sqlite'; path: string };
  prefix: string;
  valueBytes: number;
  from: number;
  to: number;
  step: number;
  concurrency: number;
}

export type LoadJob = RequestsJob | ListLoopJob | WatchJob | RawJob;

/** What a run of requests (or raw calls) gives back. */
export interface RunResult {
  startNs: number;
  endNs: number;
  latenciesMs: number[];
  bytes: number;
}

/** What a list loop gives back: each client's list durations (ms) and when each ended (ns). */
export interface ListLoopResult {
  clients: { path: string; durationsMs: number[]; endNs: number[] }[];
}

/** The arrival time (ns) of each watcher's events, by the marker the watch job was told to look for. */
export interface WatchResult {
  arrivals: Record<string, number>[];
}

type ParentMessage = { id: number; job: LoadJob } | { id: number; stopWatches: true };
type WorkerMessage =
  { id: number; result: unknown } | { id: number; error: string } | { seen: string } | { ready: true };

/**
 * How many of the workers hold the watchers (BENCH_WATCH_PROCESSES, default 2). Each event a watcher reads costs its
 * process a TLS read and a wake-up; on 2 CPUs, 4 processes took twice the CPU per event of 1 or 2 (more context
 * switches for the same reads), and that CPU is taken from the server being measured.
 */
const WATCH_PROCESSES = Math.max(1, Math.floor(Number(process.env.BENCH_WATCH_PROCESSES ?? '') || 2));

/** The six-digit name of object `i`. */
export function objectName(prefix: string, i: number): string {
  return `${prefix}${String(i).padStart(6, '0')}`;
}

/** Several worker processes and their jobs. */
export class LoadGenerator {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (r: unknown) => void; reject: (e: Error) => void }>();
  private seenListener: ((marker: string, worker: number) => void) | undefined;
  private closing = false;

  private constructor(private readonly workers: ChildProcess[]) {
    workers.forEach((w, index) => {
      // A worker that dies fails what is waiting (rather than leaving the benchmark waiting for ever).
      w.on('exit', (code, signal) => {
        if (this.closing) return;
        const error = new Error(`load worker ${index} exited (${signal ?? code})`);
        for (const waiter of this.waiting.values()) waiter.reject(error);
        this.waiting.clear();
      });
      w.on('message', (m: WorkerMessage) => {
        if ('seen' in m) this.seenListener?.(m.seen, index);
        else if ('id' in m) {
          const waiter = this.waiting.get(m.id);
          this.waiting.delete(m.id);
          if ('error' in m) waiter?.reject(new Error(`load worker ${index}: ${m.error}`));
          else waiter?.resolve(m.result);
        }
      });
    });
  }

  /** Starts `processes` workers (compiled, or from the sources through the TypeScript hook) and waits for them. */
  static async start(processes: number): Promise<LoadGenerator> {
    const compiled = __filename.endsWith('.js');
    const packageRoot = resolve(__dirname, '..', '..');
    const workers = await Promise.all(
      Array.from({ length: processes }, async () => {
        const child = fork(compiled ? __filename : join(__dirname, 'bench-load.ts'), [], {
          execArgv: compiled ? [] : ['-r', join(packageRoot, 'src', 'storage', 'testing', 'ts-register.js')],
          stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
          env: { ...process.env, BENCH_LOAD_WORKER: '1' },
        });
        await new Promise<void>((ready, failed) => {
          child.once('message', () => ready());
          child.once('exit', (code) => failed(new Error(`a load worker exited with ${code} before it started`)));
        });
        return child;
      }),
    );
    return new LoadGenerator(workers);
  }

  get size(): number {
    return this.workers.length;
  }

  /** The workers' pids (for their CPU). */
  get pids(): number[] {
    return this.workers.map((w) => w.pid!);
  }

  /** Runs `job` on worker `worker`. */
  run<R>(worker: number, job: LoadJob): Promise<R> {
    return this.send(worker, { id: this.nextId++, job }) as Promise<R>;
  }

  private send(worker: number, message: ParentMessage): Promise<unknown> {
    return new Promise((resolvePromise, reject) => {
      this.waiting.set(message.id, { resolve: resolvePromise, reject });
      this.workers[worker]!.send(message);
    });
  }

  /**
   * `total` requests (or raw calls) spread over the first `workers` workers (each `i` to one of them, in turn),
   * `concurrency` at a time in all (split evenly). Gives the rate (from the first start to the last end) and every
   * latency.
   */
  async spread(
    job:
      Omit<RequestsJob, 'from' | 'to' | 'step' | 'concurrency'> | Omit<RawJob, 'from' | 'to' | 'step' | 'concurrency'>,
    total: number,
    concurrency: number,
    workers = this.workers.length,
  ): Promise<{ perSecond: number; latenciesMs: number[]; bytes: number }> {
    const n = Math.max(1, Math.min(workers, concurrency, this.workers.length));
    const results = await Promise.all(
      Array.from({ length: n }, (_, w) =>
        this.run<RunResult>(w, {
          ...job,
          from: w,
          to: total,
          step: n,
          concurrency: Math.floor(concurrency / n) + (w < concurrency % n ? 1 : 0),
        } as LoadJob),
      ),
    );
    const start = Math.min(...results.map((r) => r.startNs));
    const end = Math.max(...results.map((r) => r.endNs));
    return {
      perSecond: total / ((end - start) / 1e9),
      latenciesMs: results.flatMap((r) => r.latenciesMs),
      bytes: results.reduce((a, r) => a + r.bytes, 0),
    };
  }

  /**
   * Opens `watchers` watches spread over the workers, each of which calls `onSeen(marker)` once every watch of its
   * own has seen an event carrying `marker` (a ConfigMap's `data.mode`). `stop` closes them and gives each watch's
   * arrival time of each marker.
   */
  async watch(
    target: LoadTarget,
    path: string,
    watchers: number,
    onSeen: (marker: string, worker: number) => void,
  ): Promise<{ workers: number; stop(): Promise<WatchResult> }> {
    const n = Math.min(watchers, WATCH_PROCESSES, this.workers.length);
    this.seenListener = onSeen;
    await Promise.all(
      Array.from({ length: n }, (_, w) =>
        this.run(w, {
          kind: 'watch',
          target,
          path,
          watchers: Math.floor(watchers / n) + (w < watchers % n ? 1 : 0),
        }),
      ),
    );
    return {
      workers: n,
      stop: async () => {
        const all = await Promise.all(
          Array.from(
            { length: n },
            (_, w) => this.send(w, { id: this.nextId++, stopWatches: true }) as Promise<WatchResult>,
          ),
        );
        this.seenListener = undefined;
        return { arrivals: all.flatMap((r) => r.arrivals) };
      },
    };
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(
      this.workers.map(
        (w) =>
          new Promise<void>((done) => {
            if (w.exitCode !== null) return done();
            w.once('exit', () => done());
            w.kill('SIGTERM');
          }),
      ),
    );
  }
}

// ---- the worker side ----

const clients = new Map<string, BenchClient>();

/** The worker's client of `target`, kept from job to job (warm connections). */
function clientOf(t: LoadTarget): BenchClient {
  const key = `${t.url} ${t.token} ${t.connections}`;
  let c = clients.get(key);
  if (!c) {
    c = new BenchClient(t.url, t.ca, t.connections, t.token);
    clients.set(key, c);
  }
  return c;
}

const nowNs = (): number => Number(process.hrtime.bigint());

/** Runs `op(i)` for the job's numbers, `concurrency` at a time; the latency of each. */
async function runNumbered(
  job: { from: number; to: number; step: number; concurrency: number },
  op: (i: number) => Promise<number>,
): Promise<RunResult> {
  const latenciesMs: number[] = [];
  let next = job.from;
  let bytes = 0;
  const startNs = nowNs();
  await Promise.all(
    Array.from({ length: Math.max(1, job.concurrency) }, async () => {
      for (let i = next; i < job.to; i = next) {
        next += job.step;
        const t = nowNs();
        bytes += await op(i);
        latenciesMs.push((nowNs() - t) / 1e6);
      }
    }),
  );
  return { startNs, endNs: nowNs(), latenciesMs, bytes };
}

async function runRequests(job: RequestsJob): Promise<RunResult> {
  const client = clientOf(job.target);
  return runNumbered(job, async (i) => {
    const name = objectName(job.namePrefix, job.modulo ? i % job.modulo : i);
    const path = job.path.replace('{name}', name);
    if (job.drain) {
      const r = await client.drain(path);
      if (r.status !== job.expect) throw new Error(`${job.method} ${path}: ${r.status}, want ${job.expect}`);
      return r.bytes;
    }
    const body = job.body && { ...job.body, metadata: { ...job.body.metadata, name } };
    return (await client.expect(job.expect, job.method, path, body)).body.length;
  });
}

async function runListLoop(job: ListLoopJob): Promise<ListLoopResult> {
  const client = clientOf(job.target);
  const deadline = nowNs() + job.durationMs * 1e6;
  const clientsOut = await Promise.all(
    job.paths.map(async (path) => {
      const durationsMs: number[] = [];
      const endNs: number[] = [];
      while (nowNs() < deadline) {
        const t = nowNs();
        const r = await client.drain(path);
        if (r.status !== 200) throw new Error(`GET ${path}: ${r.status}`);
        const end = nowNs();
        durationsMs.push((end - t) / 1e6);
        endNs.push(end);
      }
      return { path, durationsMs, endNs };
    }),
  );
  return { clients: clientsOut };
}

/** The watches of this worker: each one's arrival times by marker, and how many have seen each marker. */
let watches: { stop(): void }[] = [];
let arrivals: Record<string, number>[] = [];
const seenBy = new Map<string, number>();

const MODIFIED = Buffer.from('{"type":"MODIFIED"');
const MODE = Buffer.from('"mode":"');

/**
 * The marker of a watch event's line (a JSON `{type, object}`): the ConfigMap's `data.mode` of a MODIFIED event, else
 * undefined. Found by searching the bytes, not by parsing the event: the worker's cost per event is what its reads
 * cost, and a JSON.parse of every event of 50 watchers was CPU taken from the server being measured.
 */
function modifiedMarker(line: Buffer): string | undefined {
  if (line.indexOf(MODIFIED) !== 0) return undefined;
  const at = line.indexOf(MODE);
  if (at < 0) return undefined;
  const end = line.indexOf(0x22, at + MODE.length);
  return end < 0 ? undefined : line.toString('latin1', at + MODE.length, end);
}

/** Records `marker` for one watch (the first time it sees it), and tells the parent once every watch of this worker has. */
function arrived(mine: Record<string, number>, marker: string, atNs: number): void {
  if (mine[marker] !== undefined) return;
  mine[marker] = atNs;
  const seen = (seenBy.get(marker) ?? 0) + 1;
  seenBy.set(marker, seen);
  if (seen === arrivals.length) {
    seenBy.delete(marker);
    process.send!({ seen: marker } satisfies WorkerMessage);
  }
}

const secureContexts = new Map<string, SecureContext>();

/**
 * A watch over HTTP/1.1 on a TLS connection of its own, without Node's HTTP client: the request is written by hand,
 * and the response read as bytes split at newlines (the chunk-size lines of the chunked encoding, which never start
 * like an event, are skipped as any other line), each line's arrival time being when its bytes were read. Resolves
 * once the server answered 200.
 */
function rawWatch(
  t: LoadTarget,
  path: string,
  onLine: (line: Buffer, atNs: number) => void,
): Promise<{ stop(): void }> {
  const url = new URL(t.url);
  let context = secureContexts.get(t.ca);
  if (!context) {
    context = createSecureContext({ ca: t.ca });
    secureContexts.set(t.ca, context);
  }
  return new Promise((resolvePromise, reject) => {
    const socket = tlsConnect({ host: url.hostname, port: Number(url.port), secureContext: context });
    socket.setNoDelay(true);
    let head: Buffer | undefined = Buffer.alloc(0);
    let rest = Buffer.alloc(0);
    socket.once('secureConnect', () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${t.token}\r\n` +
          'Accept: application/json\r\nConnection: close\r\n\r\n',
      );
    });
    socket.on('error', (err) => (head ? reject(err) : undefined));
    socket.on('data', (chunk: Buffer) => {
      const atNs = nowNs();
      let data = chunk;
      if (head) {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        const status = /^HTTP\/1\.1 (\d{3})/.exec(head.toString('latin1', 0, Math.min(end, 64)))?.[1];
        if (status !== '200') {
          reject(new Error(`watch ${path}: ${status ?? 'no status'}: ${head.toString('utf8', 0, 400)}`));
          socket.destroy();
          return;
        }
        data = head.subarray(end + 4);
        head = undefined;
        resolvePromise({ stop: () => socket.destroy() });
      }
      if (rest.length > 0) data = Buffer.concat([rest, data]);
      let from = 0;
      for (let nl = data.indexOf(0x0a); nl >= 0; nl = data.indexOf(0x0a, from)) {
        if (nl > from) onLine(data.subarray(from, nl), atNs);
        from = nl + 1;
      }
      rest = from < data.length ? Buffer.from(data.subarray(from)) : Buffer.alloc(0);
    });
  });
}

async function runWatch(job: WatchJob): Promise<void> {
  const client = clientOf(job.target);
  const opened = await Promise.all(
    Array.from({ length: job.watchers }, () => {
      const mine: Record<string, number> = {};
      arrivals.push(mine);
      const onLine = (line: Buffer, atNs: number): void => {
        const marker = modifiedMarker(line);
        if (marker) arrived(mine, marker, atNs);
      };
      // Over HTTP/2 the watches are streams of the client's connection (Node's client); else raw connections.
      if (BENCH_HTTP2) return client.watch(job.path, (line, atNs) => onLine(Buffer.from(line), atNs));
      return rawWatch(job.target, job.path, onLine);
    }),
  );
  watches.push(...opened);
}

async function runRaw(job: RawJob): Promise<RunResult> {
  const value = new TextEncoder().encode(JSON.stringify({ padding: 'x'.repeat(Math.max(0, job.valueBytes - 16)) }));
  let store: { create(key: string, value: Uint8Array): Promise<unknown>; close(): Promise<void> };
  if (job.store.kind === 'etcd') {
    const { Etcd3Store } = await import('../storage/etcd3/etcd3-store');
    store = new Etcd3Store({ endpoints: job.store.endpoints });
  } else {
    const { SqliteStore } = await import('../storage/sqlite/sqlite-store');
    store = await SqliteStore.open(job.store.path);
  }
  try {
    return await runNumbered(job, async (i) => {
      await store.create(objectName(job.prefix, i), value);
      return 0;
    });
  } finally {
    await store.close();
  }
}

function runJob(job: LoadJob): Promise<unknown> {
  switch (job.kind) {
    case 'requests':
      return runRequests(job);
    case 'listLoop':
      return runListLoop(job);
    case 'watch':
      return runWatch(job);
    case 'raw':
      return runRaw(job);
  }
}

function workerMain(): void {
  process.on('message', (m: ParentMessage) => {
    const reply = (r: WorkerMessage): void => void process.send!(r);
    if ('stopWatches' in m) {
      for (const w of watches) w.stop();
      reply({ id: m.id, result: { arrivals } satisfies WatchResult });
      watches = [];
      arrivals = [];
      seenBy.clear();
      return;
    }
    runJob(m.job).then(
      (result) => reply({ id: m.id, result: result ?? null }),
      (e: unknown) => reply({ id: m.id, error: e instanceof Error ? e.message : String(e) }),
    );
  });
  // The benchmark went away: so does its load.
  process.on('disconnect', () => process.exit(0));
  process.send!({ ready: true } satisfies WorkerMessage);
}

if (require.main === module && process.env.BENCH_LOAD_WORKER === '1') workerMain();
