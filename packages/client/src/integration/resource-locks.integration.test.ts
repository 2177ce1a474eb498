/**
 * Leader election on every `--leader-elect-resource-lock` of Kubernetes 1.21 against a real API server process,
 * with a lock name and namespace other than the defaults: one candidate leads and writes its lock object(s) (both
 * the old-style object and the Lease for the migration locks); once it stops renewing, the other takes over, not
 * before a lease duration has passed since the last renewal that reached the server; a clean stop releases. And the
 * migration path 1.21 documents, from `endpoints` to `endpointsleases`: the same leader keeps leading.
 *
 * Candidates run in this process, each with its own client. Nothing here depends on which of two candidates reaches
 * a state first: takeovers are awaited with generous deadlines, and the only time asserted is the lower bound the
 * algorithm guarantees.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';

import { ConfigMapKind, EndpointsKind, isNotFound, LeaseKind, NamespaceKind } from '@platform/api';
import {
  Clientset,
  decodeAnnotationRecord,
  LEADER_ELECTION_RECORD_ANNOTATION,
  LeaderElector,
  type LeaderElectionRecord,
  leaseSpecToRecord,
  type LockState,
  newResourceLock,
  type ResourceLock,
  RestClient,
} from '@platform/client';

import { apiServerProcess, type ApiServerProcess, waitFor } from './support';

const LEASE_MS = 2000;
const RENEW_MS = 1500;
const RETRY_MS = 400;
const NS = 'lock-tests';
const DEADLINE_MS = 30_000;

let server: ApiServerProcess;
let admin: Clientset;
const rests: RestClient[] = [];

function client(): Clientset {
  const rest = new RestClient({
    server: server.url,
    ca: readFileSync(join(server.dir, 'pki', 'apiserver.crt')),
    token: 'integration-test-token',
    qps: 0,
  });
  rests.push(rest);
  return new Clientset(rest);
}

beforeAll(async () => {
  server = await apiServerProcess();
  await server.start();
  admin = client();
  await admin.resource(NamespaceKind).create({ metadata: { name: NS } });
}, 120_000);
afterAll(async () => {
  for (const r of rests) r.close();
  await server.stop('SIGKILL');
  rmSync(server.dir, { recursive: true, force: true });
});

/** A lock that notes when its last successful write was sent (before the server could have applied it). */
class TimedLock implements ResourceLock {
  lastWriteSentAt = 0;
  constructor(private readonly inner: ResourceLock) {}
  get(signal?: AbortSignal): Promise<LockState> {
    return this.inner.get(signal);
  }
  private async write(w: () => Promise<LockState>): Promise<LockState> {
    const sent = Date.now();
    const s = await w();
    this.lastWriteSentAt = sent;
    return s;
  }
  create(r: LeaderElectionRecord, signal?: AbortSignal): Promise<LockState> {
    return this.write(() => this.inner.create(r, signal));
  }
  update(r: LeaderElectionRecord, signal?: AbortSignal): Promise<LockState> {
    return this.write(() => this.inner.update(r, signal));
  }
  describe(): string {
    return this.inner.describe();
  }
}

interface Candidate {
  id: string;
  elector: LeaderElector;
  lock: TimedLock;
  startedAt: number[];
  stop(): Promise<void>;
}

/** Starts a candidate; `stop` aborts it, releasing the lock only when `release`. */
function candidate(id: string, resourceLock: string, name: string, release: boolean): Candidate {
  const config = {
    leaderElect: true,
    leaseDurationMs: LEASE_MS,
    renewDeadlineMs: RENEW_MS,
    retryPeriodMs: RETRY_MS,
    resourceLock,
    resourceName: name,
    resourceNamespace: NS,
  };
  const lock = new TimedLock(newResourceLock(client(), config, id));
  const startedAt: number[] = [];
  const elector = new LeaderElector({
    lock,
    config,
    identity: id,
    releaseOnCancel: release,
    callbacks: {
      onStartedLeading: (signal) => {
        startedAt.push(Date.now());
        return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      },
    },
  });
  const ac = new AbortController();
  const done = elector.run(ac.signal);
  return {
    id,
    elector,
    lock,
    startedAt,
    stop: async () => {
      ac.abort();
      await done;
    },
  };
}

/** The records in the lock objects named `name` (undefined where the object does not exist). */
async function records(
  name: string,
): Promise<Record<'endpoints' | 'configmaps' | 'leases', LeaderElectionRecord | undefined>> {
  const annotation = async (read: () => Promise<{ metadata?: { annotations?: Record<string, string> } }>) => {
    try {
      const raw = (await read()).metadata?.annotations?.[LEADER_ELECTION_RECORD_ANNOTATION];
      return raw === undefined ? undefined : decodeAnnotationRecord(raw);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  const lease = async (): Promise<LeaderElectionRecord | undefined> => {
    try {
      return leaseSpecToRecord((await admin.resource(LeaseKind, NS).get(name)).spec);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  return {
    endpoints: await annotation(() => admin.resource(EndpointsKind, NS).get(name)),
    configmaps: await annotation(() => admin.resource(ConfigMapKind, NS).get(name)),
    leases: await lease(),
  };
}

/** The objects each lock type writes. */
const WRITES: Record<string, ('endpoints' | 'configmaps' | 'leases')[]> = {
  leases: ['leases'],
  endpoints: ['endpoints'],
  configmaps: ['configmaps'],
  endpointsleases: ['endpoints', 'leases'],
  configmapsleases: ['configmaps', 'leases'],
};

async function holders(name: string, lockType: string): Promise<Record<string, string | undefined>> {
  const r = await records(name);
  return Object.fromEntries(
    (['endpoints', 'configmaps', 'leases'] as const).map((k) => [
      k,
      WRITES[lockType]!.includes(k) ? r[k]?.holderIdentity : r[k] && 'unexpected',
    ]),
  );
}

describe.each(Object.keys(WRITES))('the %s lock', (lockType) => {
  it('is led by one candidate, taken over after the lease duration when it stops renewing, released on stop', async () => {
    const name = `lock-${lockType}`;
    const only = (h: string | undefined): Record<string, string | undefined> =>
      Object.fromEntries(
        (['endpoints', 'configmaps', 'leases'] as const).map((k) => [k, WRITES[lockType]!.includes(k) ? h : undefined]),
      );
    const a = candidate('a', lockType, name, false);
    let b: Candidate | undefined;
    try {
      await waitFor('a to lead', () => a.elector.isLeader(), DEADLINE_MS);
      // The lock type writes its object(s) and nothing else.
      expect(await holders(name, lockType)).toEqual(only('a'));

      b = candidate('b', lockType, name, true);
      const bb = b;
      await waitFor('b to see a leading', () => bb.elector.getLeader() === 'a' || bb.elector.isLeader(), DEADLINE_MS);

      // a stops renewing (stopped without releasing, as a crash): b takes over once the lease ran out.
      await a.stop();
      await waitFor('b to take over', () => bb.elector.isLeader(), DEADLINE_MS);
      expect(bb.startedAt[0]! - a.lock.lastWriteSentAt).toBeGreaterThanOrEqual(LEASE_MS);
      await waitFor(
        'every lock object to name b',
        async () => {
          const h = await holders(name, lockType);
          return JSON.stringify(h) === JSON.stringify(only('b'));
        },
        DEADLINE_MS,
      );
      const taken = await records(name);
      for (const k of WRITES[lockType]!) expect(taken[k]?.leaderTransitions).toBeGreaterThanOrEqual(1);

      // A clean stop releases the lock: an empty holder in every object.
      await bb.stop();
      expect(await holders(name, lockType)).toEqual(only(''));
    } finally {
      await a.stop();
      await b?.stop();
    }
  }, 120_000);
});

describe('migrating from endpoints to endpointsleases (Kubernetes 1.21)', () => {
  it('a multilock candidate waits for the endpoints leader, then takes over writing both objects', async () => {
    const name = 'migrate-rolling';
    const old = candidate('old', 'endpoints', name, false);
    let next: Candidate | undefined;
    try {
      await waitFor('the old candidate to lead', () => old.elector.isLeader(), DEADLINE_MS);
      next = candidate('new', 'endpointsleases', name, false);
      const n = next;
      await waitFor(
        'the new candidate to see the old leader',
        () => n.elector.getLeader() === 'old' || n.startedAt.length > 0,
        DEADLINE_MS,
      );
      // The new candidate writes the Lease only once it leads.
      if ((await records(name)).leases) expect(n.startedAt.length).toBeGreaterThan(0);

      await old.stop();
      await waitFor('the new candidate to lead', () => n.elector.isLeader(), DEADLINE_MS);
      expect(n.startedAt[0]! - old.lock.lastWriteSentAt).toBeGreaterThanOrEqual(LEASE_MS);
      await waitFor(
        'both objects to name the new leader',
        async () => {
          const r = await records(name);
          return r.endpoints?.holderIdentity === 'new' && r.leases?.holderIdentity === 'new';
        },
        DEADLINE_MS,
      );
    } finally {
      await old.stop();
      await next?.stop();
    }
  }, 120_000);

  it('the leader restarted on endpointsleases keeps leading and adds the Lease', async () => {
    const name = 'migrate-restart';
    const before = candidate('host-1', 'endpoints', name, false);
    let after: Candidate | undefined;
    try {
      await waitFor('the leader on endpoints', () => before.elector.isLeader(), DEADLINE_MS);
      const led = (await records(name)).endpoints;
      expect(led?.holderIdentity).toBe('host-1');
      await before.stop();

      after = candidate('host-1', 'endpointsleases', name, false);
      const a = after;
      await waitFor('the same identity to lead on endpointsleases', () => a.elector.isLeader(), DEADLINE_MS);
      // Let it renew at least once through both objects.
      const created = (await records(name)).leases;
      expect(created?.holderIdentity).toBe('host-1');
      await waitFor(
        'a renewal of both objects',
        async () => {
          const r = await records(name);
          return (r.leases?.renewTimeMs ?? 0) > (created?.renewTimeMs ?? 0) && r.endpoints?.holderIdentity === 'host-1';
        },
        DEADLINE_MS,
      );
      const r = await records(name);
      expect(r.endpoints?.holderIdentity).toBe('host-1');
      expect(r.leases?.holderIdentity).toBe('host-1');
      // No leadership changed hands: no transition counted.
      expect(r.endpoints?.leaderTransitions).toBe(led?.leaderTransitions);
      expect(r.leases?.leaderTransitions).toBe(led?.leaderTransitions);
    } finally {
      await before.stop();
      await after?.stop();
    }
  }, 120_000);
});
