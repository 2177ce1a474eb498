/**
 * etcd failover as users meet it, for the test and the benchmark: an API server on a 3-member etcd cluster, writers
 * creating ConfigMaps over HTTPS and watchers watching them, while one member is SIGKILLed (the leader or a
 * follower) or SIGSTOPped (hung), then brought back. Measures what a user sees: errors in the first 3 s after the
 * fault and from 3 to 10 s, the time to the first write acknowledged after the fault, the time to the last error, the
 * acknowledged writes missing afterwards, and whether every watcher saw every stored key exactly once.
 */
import { Agent, request as httpsRequest } from 'node:https';

import { type EtcdCluster, type EtcdMember } from './etcd';

/** The faults a scenario can inject. */
export type Fault = 'kill-leader' | 'kill-follower' | 'hang-leader' | 'hang-follower';

/** Options of `runFailoverScenario`. */
export interface ScenarioOptions {
  /** The API server's base URL (`https://127.0.0.1:port`) and the CA its certificate verifies against. */
  url: string;
  ca: string;
  cluster: EtcdCluster;
  fault: Fault;
  /** A namespace that exists, used for this scenario's ConfigMaps only. */
  namespace: string;
  /** Concurrent writers. Default 8. */
  writers?: number;
  /** Concurrent HTTP watchers. Default 2. */
  watchers?: number;
  /** Writes before the fault, ms. Default 1000. */
  beforeMs?: number;
  /** How long the member stays down, ms. Default 10000. */
  downMs?: number;
  /** Writes after the member is back, ms. Default 2000. */
  afterMs?: number;
  /** How long watchers may take to catch up at the end, ms. Default 30000. */
  settleMs?: number;
}

/** What a scenario measured. */
export interface ScenarioResult {
  fault: Fault;
  member: string;
  acked: number;
  failed: number;
  /** Failed writes started in [fault, fault + 3 s) and in [fault + 3 s, fault + 10 s). */
  errors0to3s: number;
  errors3to10s: number;
  /** From the fault to the first write acknowledged after it, ms. */
  firstAckMs: number;
  /** From the fault to the end of the last failed write, ms (0: none failed). */
  lastErrorMs: number;
  /** Acknowledged writes not stored at the end (must be 0). */
  lost: number;
  /** Per watcher: stored keys never seen, and keys seen more than once. */
  watchMissing: number[];
  watchDuplicates: number[];
  /** Status codes of the failed writes. */
  errorStatuses: Record<string, number>;
}

interface Answer {
  status: number;
  text: string;
}

function call(agent: Agent, ca: string, url: string, method: string, path: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = httpsRequest(
      `${url}${path}`,
      {
        method,
        agent,
        ca,
        headers: payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {},
        timeout: 60000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (e) => resolve({ status: 0, text: String(e) }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 60 s')));
    req.on('error', (e) => resolve({ status: 0, text: String(e) }));
    req.end(payload);
  });
}

/** One HTTP watch counting ADDED events by name, resuming (from its last resourceVersion) when the server ends it. */
function watchCounting(
  url: string,
  ca: string,
  path: string,
  fromRv: string,
  seen: Map<string, number>,
  signal: AbortSignal,
): Promise<void> {
  let rv = fromRv;
  const once = (): Promise<void> =>
    new Promise((resolve) => {
      const req = httpsRequest(
        `${url}${path}?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}`,
        { ca },
        (res) => {
          let buf = '';
          res.on('data', (c: Buffer) => {
            buf += c.toString('utf8');
            let nl: number;
            while ((nl = buf.indexOf('\n')) >= 0) {
              const line = buf.slice(0, nl);
              buf = buf.slice(nl + 1);
              if (!line.trim()) continue;
              const ev = JSON.parse(line) as {
                type: string;
                object: { metadata?: { name?: string; resourceVersion?: string } };
              };
              if (ev.object.metadata?.resourceVersion) rv = ev.object.metadata.resourceVersion;
              if (ev.type === 'ADDED') {
                const name = ev.object.metadata?.name ?? '';
                seen.set(name, (seen.get(name) ?? 0) + 1);
              }
            }
          });
          res.on('end', () => resolve());
          res.on('error', () => resolve());
        },
      );
      req.on('error', () => resolve());
      signal.addEventListener('abort', () => req.destroy(), { once: true });
      req.end();
    });
  return (async () => {
    while (!signal.aborted) {
      await once();
      if (!signal.aborted) await new Promise((r) => setTimeout(r, 200));
    }
  })();
}

/** The member a fault hits: the leader, or a follower. */
async function target(cluster: EtcdCluster, fault: Fault): Promise<EtcdMember> {
  const leader = await cluster.leader();
  if (fault === 'kill-leader' || fault === 'hang-leader') return leader;
  const follower = cluster.members.find((m) => m !== leader && m.isRunning);
  if (!follower) throw new Error('no follower running');
  return follower;
}

/** Waits until every member answers its health check again (a restarted one has caught up). */
export async function waitHealthy(cluster: EtcdCluster, url: string, ca: string, timeoutMs = 60000): Promise<void> {
  const agent = new Agent({ keepAlive: false });
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const leader = await cluster.leader(timeoutMs).catch(() => undefined);
      const ready = await call(agent, ca, url, 'GET', '/readyz');
      if (leader && ready.status === 200 && cluster.members.every((m) => m.isRunning)) return;
      if (Date.now() > deadline) throw new Error(`cluster not healthy in time: readyz ${ready.status} ${ready.text}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    agent.destroy();
  }
}

/** Runs one fault with writers and watchers going, restores the member, and measures. */
export async function runFailoverScenario(o: ScenarioOptions): Promise<ScenarioResult> {
  const writers = o.writers ?? 8;
  const beforeMs = o.beforeMs ?? 1000;
  const downMs = o.downMs ?? 10000;
  const afterMs = o.afterMs ?? 2000;
  const agent = new Agent({ keepAlive: true, maxSockets: writers + 4 });
  const collection = `/api/v1/namespaces/${o.namespace}/configmaps`;
  try {
    const list = await call(agent, o.ca, o.url, 'GET', collection);
    if (list.status !== 200) throw new Error(`list: ${list.status} ${list.text}`);
    const startRv = (JSON.parse(list.text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const watchAbort = new AbortController();
    const seen = Array.from({ length: o.watchers ?? 2 }, () => new Map<string, number>());
    const watching = seen.map((m) => watchCounting(o.url, o.ca, collection, startRv, m, watchAbort.signal));

    const acked = new Set<string>();
    const failures: { start: number; end: number; status: number }[] = [];
    let faultAt = Number.POSITIVE_INFINITY;
    let firstAckAfter = Number.POSITIVE_INFINITY;
    let stop = false;
    const writer = async (w: number): Promise<void> => {
      for (let i = 0; !stop; i++) {
        const name = `w${w}-${i}`;
        const start = Date.now();
        const r = await call(agent, o.ca, o.url, 'POST', collection, { metadata: { name }, data: { k: name } });
        const end = Date.now();
        if (r.status === 201) {
          acked.add(name);
          if (start >= faultAt && end < firstAckAfter) firstAckAfter = end;
        } else {
          failures.push({ start, end, status: r.status });
          await new Promise((res) => setTimeout(res, 20)); // a failing server is not hammered in a tight loop
        }
      }
    };
    const writing = Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));

    await new Promise((r) => setTimeout(r, beforeMs));
    const member = await target(o.cluster, o.fault);
    faultAt = Date.now();
    if (o.fault.startsWith('kill')) await member.kill();
    else member.pause();
    await new Promise((r) => setTimeout(r, downMs));
    if (o.fault.startsWith('kill')) await member.restart();
    else member.resume();
    await new Promise((r) => setTimeout(r, afterMs));
    stop = true;
    await writing;

    // Every acknowledged write is stored; every watcher sees every stored key exactly once.
    const stored = new Set<string>();
    const all = await call(agent, o.ca, o.url, 'GET', collection);
    for (const item of (JSON.parse(all.text) as { items: { metadata: { name: string } }[] }).items) {
      stored.add(item.metadata.name);
    }
    const settleDeadline = Date.now() + (o.settleMs ?? 30000);
    while (Date.now() < settleDeadline && seen.some((m) => [...stored].some((k) => !m.has(k)))) {
      await new Promise((r) => setTimeout(r, 100));
    }
    watchAbort.abort();
    await Promise.all(watching);

    const errorStatuses: Record<string, number> = {};
    for (const f of failures) errorStatuses[f.status] = (errorStatuses[f.status] ?? 0) + 1;
    const after = failures.filter((f) => f.end >= faultAt);
    return {
      fault: o.fault,
      member: member.name,
      acked: acked.size,
      failed: failures.length,
      errors0to3s: after.filter((f) => f.start < faultAt + 3000).length,
      errors3to10s: after.filter((f) => f.start >= faultAt + 3000 && f.start < faultAt + 10000).length,
      firstAckMs: firstAckAfter - faultAt,
      lastErrorMs: after.length ? Math.max(...after.map((f) => f.end)) - faultAt : 0,
      lost: [...acked].filter((k) => !stored.has(k)).length,
      watchMissing: seen.map((m) => [...stored].filter((k) => !m.has(k)).length),
      watchDuplicates: seen.map((m) => [...m.values()].filter((n) => n > 1).length),
      errorStatuses,
    };
  } finally {
    agent.destroy();
  }
}

/** One line of figures for a scenario. */
export function formatScenario(r: ScenarioResult): string {
  return (
    `${r.fault.padEnd(14)} (${r.member}): acked ${r.acked}, failed ${r.failed} ${JSON.stringify(r.errorStatuses)}; ` +
    `errors 0-3 s: ${r.errors0to3s}, 3-10 s: ${r.errors3to10s}; first ack after ${r.firstAckMs} ms; ` +
    `last error at ${r.lastErrorMs} ms; lost acked writes: ${r.lost}; ` +
    `watch missing ${r.watchMissing.join('/')}, duplicates ${r.watchDuplicates.join('/')}`
  );
}
