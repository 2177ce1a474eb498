/**
 * Soak benchmark (`npm run bench -- soak`, issue 17): memory of the API server under a sustained watch load, on each
 * store (the embedded SQLite store and a real etcd: one member, its default durable settings, on a temp dir).
 *
 * 50 watchers on the ConfigMaps of one namespace; 8 writers, each creating, patching and deleting 512-byte ConfigMaps
 * as fast as the server answers, for SOAK_SECONDS (default 180). The server runs as a child process (see
 * `testing/bench-server.ts`); its RSS is printed every 15 s, with the writes, the events delivered against those
 * expected (every acknowledged write is one event at each watcher) and the errors. After the load it waits until
 * every watcher has every event, then prints the RSS once more. A watch the server ends is resumed from the last
 * resourceVersion its watcher read (counted as a restart; events are still all expected).
 *
 * Targets (issue 17): peak RSS ≤ 600 MiB, less than 5% growth over the last minute of the load, every event
 * delivered, no errors. Printed, never asserted. SOAK_STORES=sqlite (or etcd) runs one store; SOAK_WATCHERS and
 * SOAK_WRITERS change the load.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort, startEtcd, type EtcdCluster } from '../storage/testing/etcd';
import { BenchClient, type ServerProcess, startServerProcess, step } from '../testing/bench-server';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 180);
const WATCHERS = Number(process.env.SOAK_WATCHERS ?? 50);
const WRITERS = Number(process.env.SOAK_WRITERS ?? 8);
const SAMPLE_MS = 15_000;
const NS = 'soak';
const CM_PATH = `/api/v1/namespaces/${NS}/configmaps`;

/** A ConfigMap with 512 bytes of data. */
function configMap(name: string): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data: { payload: 'x'.repeat(512) } };
}

interface Sample {
  t: number;
  rssMiB: number;
  writes: number;
  delivered: number;
  errors: number;
}

interface Result {
  store: string;
  samples: Sample[];
  afterLoad: Sample;
  peakMiB: number;
  startMiB: number;
  writes: number;
  writeErrors: number;
  delivered: number;
  expected: number;
  restarts: number;
  watchErrors: number;
}

/** One watcher: counts events (lines) and remembers the last resourceVersion it read, re-watching from it. */
class Watcher {
  events = 0;
  restarts = 0;
  errors = 0;
  private rv: string;
  private req: ReturnType<typeof httpsRequest> | undefined;
  private stopped = false;

  constructor(
    private readonly server: ServerProcess,
    private readonly agent: Agent,
    rv: string,
  ) {
    this.rv = rv;
  }

  /** Resolves once the server answered 200. */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        `${this.server.url}${CM_PATH}?watch=1&resourceVersion=${this.rv}&timeoutSeconds=3600`,
        { agent: this.agent },
        (res) => {
          if (res.statusCode !== 200) {
            this.errors++;
            res.resume();
            reject(new Error(`watch: ${res.statusCode}`));
            return;
          }
          resolve();
          let tail = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            const text = tail + chunk;
            const last = text.lastIndexOf('\n');
            if (last < 0) {
              tail = text;
              return;
            }
            for (let i = text.indexOf('\n'); i >= 0 && i <= last; i = text.indexOf('\n', i + 1)) this.events++;
            // The resourceVersion of the last complete event: where a restart resumes.
            const at = text.lastIndexOf('"resourceVersion":"', last);
            if (at >= 0) this.rv = text.slice(at + 19, text.indexOf('"', at + 19));
            tail = text.slice(last + 1);
          });
          res.on('error', () => {});
          res.on('close', () => {
            if (this.stopped) return;
            this.restarts++;
            this.start().catch(() => this.errors++);
          });
        },
      );
      req.on('error', (err) => {
        if (this.stopped) return;
        this.errors++;
        reject(err);
      });
      req.end();
      this.req = req;
    });
  }

  stop(): void {
    this.stopped = true;
    this.req?.destroy();
  }
}

async function startServer(dir: string, storeServers: string): Promise<ServerProcess> {
  const port = await freePort();
  const certDir = join(dir, 'pki');
  const args = [
    `--store-servers=${storeServers}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${certDir}`,
    '--endpoint-reconciler-type=none',
    '--enable-priority-and-fairness=false',
  ];
  // From sources on a busy machine, transpiling the server takes a minute.
  return startServerProcess({ args, port, certDir, readyTimeoutMs: 180_000 });
}

async function soak(storeName: string, dir: string, storeServers: string): Promise<Result> {
  step(`${storeName}: starting the API server`);
  const server = await startServer(dir, storeServers);
  const client = new BenchClient(server.url, server.ca, WRITERS + 2);
  const agent = new Agent({ keepAlive: false, maxSockets: WATCHERS * 2, ca: server.ca });
  const watchers: Watcher[] = [];
  try {
    await client.expect(201, 'POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: NS },
    });
    const rv = JSON.parse((await client.expect(200, 'GET', CM_PATH)).body.toString('utf8')).metadata
      .resourceVersion as string;
    for (let i = 0; i < WATCHERS; i++) watchers.push(new Watcher(server, agent, rv));
    await Promise.all(watchers.map((w) => w.start()));
    const startMiB = server.memory().currentMiB;
    step(
      `${storeName}: ${WATCHERS} watchers open, RSS ${startMiB.toFixed(0)} MiB; ${WRITERS} writers for ${SECONDS} s`,
    );
    let writes = 0;
    let writeErrors = 0;
    const delivered = (): number => watchers.reduce((n, w) => n + w.events, 0);
    const t0 = performance.now();
    const deadline = t0 + SECONDS * 1000;
    const sample = (): Sample => ({
      t: (performance.now() - t0) / 1000,
      rssMiB: server.memory().currentMiB,
      writes,
      delivered: delivered(),
      errors: writeErrors + watchers.reduce((n, w) => n + w.errors, 0),
    });
    const samples: Sample[] = [];
    const print = (s: Sample, what = ''): void =>
      console.log(
        `  ${storeName} ${what}t=${s.t.toFixed(0).padStart(4)}s RSS ${s.rssMiB.toFixed(0).padStart(5)} MiB, ` +
          `writes ${s.writes}, events ${s.delivered}/${s.writes * WATCHERS}, errors ${s.errors}`,
      );
    const sampler = setInterval(() => {
      const s = sample();
      samples.push(s);
      print(s);
    }, SAMPLE_MS);
    let seq = 0;
    const writer = async (id: number): Promise<void> => {
      while (performance.now() < deadline) {
        const name = `cm-${id}-${seq++}`;
        const ops: [string, string, unknown?][] = [
          ['POST', CM_PATH, configMap(name)],
          ['PATCH', `${CM_PATH}/${name}`, { data: { more: String(seq) } }],
          ['DELETE', `${CM_PATH}/${name}`],
        ];
        for (const [method, path, body] of ops) {
          const type = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
          const r = await client.request(method, path, body, type).catch(() => undefined);
          if (r && r.status < 300) writes++;
          else {
            writeErrors++;
            break;
          }
        }
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, (_, i) => writer(i)));
    clearInterval(sampler);
    const endOfLoad = sample();
    samples.push(endOfLoad);
    print(endOfLoad, 'end of load ');
    // Every watcher must get every event; wait for them (at most a minute).
    const expected = writes * WATCHERS;
    for (const until = performance.now() + 60_000; delivered() < expected && performance.now() < until;) {
      await new Promise((r) => setTimeout(r, 200));
    }
    // Then a while idle: memory should stay where it was, not keep what the load brought.
    await new Promise((r) => setTimeout(r, 10_000));
    const afterLoad = sample();
    print(afterLoad, 'idle after load ');
    return {
      store: storeName,
      samples,
      afterLoad,
      peakMiB: server.memory().peakMiB,
      startMiB,
      writes,
      writeErrors,
      delivered: delivered(),
      expected,
      restarts: watchers.reduce((n, w) => n + w.restarts, 0),
      watchErrors: watchers.reduce((n, w) => n + w.errors, 0),
    };
  } finally {
    for (const w of watchers) w.stop();
    agent.destroy();
    client.close();
    await server.stop();
  }
}

function report(results: Result[]): void {
  console.log(
    `\nSoak: ${WATCHERS} watchers, ${WRITERS} writers (create/patch/delete 512-byte ConfigMaps), ${SECONDS} s`,
  );
  for (const r of results) {
    const end = r.samples[r.samples.length - 1]!;
    // RSS a minute before the end of the load (the sample nearest to it).
    const minuteBefore = r.samples.reduce((best, s) =>
      Math.abs(s.t - (end.t - 60)) < Math.abs(best.t - (end.t - 60)) ? s : best,
    );
    const growth = ((end.rssMiB - minuteBefore.rssMiB) / minuteBefore.rssMiB) * 100;
    const ok = (cond: boolean): string => (cond ? 'ok' : 'MISSED');
    console.log(`\n${r.store}`);
    console.log(
      `  RSS: start ${r.startMiB.toFixed(0)} MiB, samples ${r.samples.map((s) => s.rssMiB.toFixed(0)).join(' ')}`,
    );
    console.log(`  peak RSS ${r.peakMiB.toFixed(0)} MiB (target ≤ 600: ${ok(r.peakMiB <= 600)})`);
    console.log(
      `  growth over the last minute ${growth.toFixed(1)}% (${minuteBefore.rssMiB.toFixed(0)} → ${end.rssMiB.toFixed(0)} MiB at ` +
        `t=${minuteBefore.t.toFixed(0)}..${end.t.toFixed(0)}s; target < 5%: ${ok(growth < 5)})`,
    );
    console.log(`  idle after the load: ${r.afterLoad.rssMiB.toFixed(0)} MiB`);
    console.log(
      `  writes ${r.writes} (${(r.writes / end.t).toFixed(0)}/s), errors ${r.writeErrors}; events delivered ${r.delivered} of ` +
        `${r.expected} (${ok(r.delivered === r.expected)}); watch restarts ${r.restarts}, watch errors ${r.watchErrors}`,
    );
  }
}

async function main(): Promise<void> {
  const results: Result[] = [];
  const loadBefore = loadavg()[0]!;
  const stores = (process.env.SOAK_STORES ?? 'sqlite,etcd').split(',');
  if (stores.includes('sqlite')) {
    const dir = mkdtempSync(join(tmpdir(), 'apiserver-soak-'));
    try {
      results.push(await soak('SQLite', dir, `sqlite://${join(dir, 'state.db')}`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (stores.includes('etcd')) {
    const dir = mkdtempSync(join(tmpdir(), 'apiserver-soak-'));
    let cluster: EtcdCluster | undefined;
    try {
      cluster = await startEtcd({ timing: 'defaults', progressNotifyInterval: '' });
      results.push(await soak('etcd', dir, cluster.endpoints.join(',')));
    } finally {
      await cluster?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  report(results);
  console.log(
    `Machine: ${cpus().length} CPUs, load average ${loadBefore.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end (1 min).`,
  );
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
