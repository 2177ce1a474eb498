/**
 * Leader election between candidate processes on a real API server process: exactly one leads at any time;
 * after the leader is killed (SIGKILL, no release) another takes over within the lease duration (plus one
 * jittered retry period for the poll that notices); after a clean shutdown (SIGTERM) the lease is released and
 * another takes over at its next retry.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';

import { apiServerProcess, type ApiServerProcess, waitFor } from './support';

const LEASE_MS = 3000;
const RENEW_MS = 2000;
const RETRY_MS = 500;

let server: ApiServerProcess;
beforeAll(async () => {
  server = await apiServerProcess();
  await server.start();
}, 120_000);
afterAll(async () => {
  await server.stop('SIGKILL');
  rmSync(server.dir, { recursive: true, force: true });
});

interface Candidate {
  id: string;
  child: ChildProcess;
  events: { ev: string; id: string; t: number }[];
  exited: Promise<void>;
}

function candidate(id: string): Candidate {
  const child = spawn(
    process.execPath,
    [
      join(__dirname, 'leader-candidate.js'),
      server.url,
      join(server.dir, 'pki', 'apiserver.crt'),
      id,
      String(LEASE_MS),
      String(RENEW_MS),
      String(RETRY_MS),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const c: Candidate = { id, child, events: [], exited: new Promise((r) => child.on('exit', () => r())) };
  let buf = '';
  child.stdout?.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      c.events.push(JSON.parse(buf.slice(0, nl)) as Candidate['events'][number]);
      buf = buf.slice(nl + 1);
    }
  });
  return c;
}

/** Leading intervals [start, end) of every candidate; `end` is the stop event, the kill time, or now. */
function intervals(cs: Candidate[], killedAt: Map<string, number>): { id: string; from: number; to: number }[] {
  const out: { id: string; from: number; to: number }[] = [];
  for (const c of cs) {
    let from: number | undefined;
    for (const e of c.events) {
      if (e.ev === 'start') from = e.t;
      if (e.ev === 'stop' && from !== undefined) {
        out.push({ id: c.id, from, to: e.t });
        from = undefined;
      }
    }
    if (from !== undefined) out.push({ id: c.id, from, to: killedAt.get(c.id) ?? Date.now() });
  }
  return out;
}

const leaders = (cs: Candidate[]): Candidate[] =>
  cs.filter((c) => {
    const last = [...c.events].reverse().find((e) => e.ev === 'start' || e.ev === 'stop');
    return last?.ev === 'start' && c.child.exitCode === null && c.child.signalCode === null;
  });

it('exactly one candidate leads; a killed leader is replaced within the lease duration; a stopped one releases', async () => {
  const cs = [candidate('a'), candidate('b'), candidate('c')];
  const killedAt = new Map<string, number>();
  try {
    await waitFor('a leader', () => leaders(cs).length === 1, 20_000);
    // Steady state: nobody else takes over while the leader renews (several lease durations).
    await new Promise((r) => setTimeout(r, 2 * LEASE_MS));
    expect(leaders(cs)).toHaveLength(1);
    const first = leaders(cs)[0] as Candidate;

    // Kill the leader: no release, the others must wait for the lease to expire.
    const killTime = Date.now();
    killedAt.set(first.id, killTime);
    first.child.kill('SIGKILL');
    await first.exited;
    await waitFor('a new leader', () => leaders(cs).length === 1, 30_000);
    const second = leaders(cs)[0] as Candidate;
    const takeover = (second.events.find((e) => e.ev === 'start') as { t: number }).t - killTime;
    // It may not take over before the lease ran out since the leader's last renewal (at most one retry before the kill)...
    expect(takeover).toBeGreaterThanOrEqual(LEASE_MS - RETRY_MS * 2.2);
    // ...and must within the lease duration plus the jittered retry period of its poll (and, on a loaded machine,
    // a few seconds of slow answers).
    expect(takeover).toBeLessThanOrEqual(LEASE_MS + RETRY_MS * 2.2 + 3000);
    process.stdout.write(`leader takeover after SIGKILL: ${takeover} ms (lease ${LEASE_MS} ms)\n`);

    // Clean shutdown: the leader releases, the remaining candidate takes over well before the lease would expire.
    const stopTime = Date.now();
    second.child.kill('SIGTERM');
    await second.exited;
    expect(second.events.map((e) => e.ev)).toContain('exit');
    await waitFor('the last candidate to lead', () => leaders(cs).length === 1, 30_000);
    const third = leaders(cs)[0] as Candidate;
    const handover = (third.events.find((e) => e.ev === 'start') as { t: number }).t - stopTime;
    expect(handover).toBeLessThan(LEASE_MS);
    process.stdout.write(`leader handover after SIGTERM: ${handover} ms\n`);

    // Never two at once.
    const iv = intervals(cs, killedAt).sort((x, y) => x.from - y.from);
    for (let i = 1; i < iv.length; i++) expect(iv[i]!.from).toBeGreaterThanOrEqual(iv[i - 1]!.to);
    expect(new Set(iv.map((x) => x.id)).size).toBe(3);
  } finally {
    for (const c of cs) c.child.kill('SIGKILL');
    await Promise.all(cs.map((c) => c.exited));
  }
}, 60_000);
