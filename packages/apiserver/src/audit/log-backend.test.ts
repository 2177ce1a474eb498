import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

import { type Logger } from '@platform/common';

import { legacyLine, microTime, sourceIPs } from './event';
import { backupTimestamp, logBackend, RotatingFile } from './log-backend';
import { type AuditEvent } from './types';

const quiet: Logger = {
  error: () => {},
  warn: () => {},
  info: () => {},
  debug: () => {},
  v: () => ({ enabled: false, info: () => {} }),
  child: () => quiet,
};

const ev: AuditEvent = {
  kind: 'Event',
  apiVersion: 'audit.platform/v1',
  level: 'Metadata',
  auditID: '5b8c1b51-5ad1-4b86-9a3c-8c8d0a1b2c3d',
  stage: 'ResponseComplete',
  requestURI: '/api/v1/namespaces/default/pods?limit=5',
  verb: 'list',
  user: { username: 'alice', groups: ['dev', 'system:authenticated'] },
  sourceIPs: ['10.0.0.1', '127.0.0.1'],
  userAgent: 'kubectl/v1.21.0',
  objectRef: { resource: 'pods', namespace: 'default', apiGroup: '', apiVersion: 'v1' },
  responseStatus: { metadata: {}, code: 200 },
  requestReceivedTimestamp: '2021-04-01T10:00:00.123400Z',
  stageTimestamp: '2021-04-01T10:00:00.125000Z',
};

describe('audit log', () => {
  it('writes Kubernetes legacy lines', () => {
    expect(legacyLine(ev)).toBe(
      '2021-04-01T10:00:00.1234Z AUDIT: id="5b8c1b51-5ad1-4b86-9a3c-8c8d0a1b2c3d" stage="ResponseComplete" ' +
        'ip="10.0.0.1" method="list" user="alice" groups="\\"dev\\",\\"system:authenticated\\"" as="<self>" ' +
        'asgroups="<lookup>" user-agent="kubectl/v1.21.0" namespace="default" ' +
        'uri="/api/v1/namespaces/default/pods?limit=5" response="200"',
    );
    const { responseStatus: _s, objectRef: _o, ...early } = ev;
    expect(legacyLine({ ...early, stage: 'RequestReceived', user: {} })).toContain(
      'user="<none>" groups="<none>" as="<self>" asgroups="<lookup>" user-agent="kubectl/v1.21.0" namespace="<none>" ' +
        'uri="/api/v1/namespaces/default/pods?limit=5" response="<deferred>"',
    );
  });

  it('formats time stamps with microseconds and lists source IPs as Kubernetes does', () => {
    expect(microTime(Date.UTC(2021, 3, 1, 10, 0, 0, 123) + 0.4567)).toBe('2021-04-01T10:00:00.123456Z');
    // The text up to the seconds is reused within a second, and recomputed across seconds, days and years.
    expect(microTime(Date.UTC(2021, 3, 1, 10, 0, 0, 999) + 0.5)).toBe('2021-04-01T10:00:00.999500Z');
    expect(microTime(Date.UTC(2021, 3, 1, 10, 0, 1, 7))).toBe('2021-04-01T10:00:01.007000Z');
    expect(microTime(Date.UTC(2021, 11, 31, 23, 59, 59, 999) + 0.999)).toBe('2021-12-31T23:59:59.999999Z');
    expect(microTime(Date.UTC(2022, 0, 1, 0, 0, 0, 0))).toBe('2022-01-01T00:00:00.000000Z');
    expect(microTime(Date.UTC(2021, 3, 1, 10, 0, 0, 42))).toBe('2021-04-01T10:00:00.042000Z');
    const req = {
      headers: { 'x-forwarded-for': '10.0.0.1, junk, 10.0.0.2', 'x-real-ip': '10.0.0.1' },
      socket: { remoteAddress: '::ffff:127.0.0.1' },
    } as never;
    expect(sourceIPs(req)).toEqual(['10.0.0.1', '10.0.0.2', '127.0.0.1']);
    const proxied = { headers: { 'x-forwarded-for': '127.0.0.1' }, socket: { remoteAddress: '127.0.0.1' } } as never;
    expect(sourceIPs(proxied)).toEqual(['127.0.0.1']);
    // Without forwarding headers, the peer alone: one list per connection.
    const socket = { remoteAddress: '::ffff:10.1.2.3' };
    const direct = sourceIPs({ headers: {}, socket } as never);
    expect(direct).toEqual(['10.1.2.3']);
    expect(sourceIPs({ headers: {}, socket } as never)).toBe(direct);
    expect(sourceIPs({ headers: {}, socket: { remoteAddress: '::1' } } as never)).toEqual(['::1']);
    expect(sourceIPs({ headers: { 'x-real-ip': '10.9.9.9' }, socket } as never)).toEqual(['10.9.9.9', '10.1.2.3']);
  });

  it('writes one JSON event per line in the configured version', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-log-'));
    const file = new RotatingFile(
      join(dir, 'sub', 'audit.log'),
      { maxSizeMB: 0, maxBackups: 0, maxAgeDays: 0, compress: false },
      quiet,
    );
    await file.open();
    const b = logBackend(file, 'json', 'audit.platform/v1beta1', quiet);
    expect(await b.processEvents([ev, { ...ev, stage: 'RequestReceived' }])).toBe(true);
    await b.shutdown();
    const lines = readFileSync(join(dir, 'sub', 'audit.log'), 'utf8')
      .trim()
      .split('\n');
    expect(lines.map((l) => JSON.parse(l) as AuditEvent)).toEqual([
      { ...ev, apiVersion: 'audit.platform/v1beta1' },
      { ...ev, apiVersion: 'audit.platform/v1beta1', stage: 'RequestReceived' },
    ]);
    expect(statSync(join(dir, 'sub', 'audit.log')).mode & 0o777).toBe(0o600);
  });

  it('rotates by size, keeps --audit-log-maxbackup backups, removes old ones and gzips the rest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-rotate-'));
    // A backup older than --audit-log-maxage, and an unrelated file that must stay.
    const day = 24 * 3600_000;
    const start = Date.UTC(2021, 3, 10, 12, 0, 0, 0);
    writeFileSync(join(dir, `audit-${backupTimestamp(start - 40 * day)}.log`), 'old\n');
    writeFileSync(join(dir, 'other.log'), 'keep\n');
    let clock = start;
    const file = new RotatingFile(
      join(dir, 'audit.log'),
      { maxSizeMB: 1, maxBackups: 2, maxAgeDays: 30, compress: true },
      quiet,
      () => (clock += 1000),
    );
    await file.open();
    const b = logBackend(file, 'json', 'audit.platform/v1', quiet);
    const line = JSON.stringify(ev).length + 1;
    const perFile = Math.floor((1024 * 1024) / line);
    const total = perFile * 4 + 10; // four rotations
    const writes: Promise<boolean | Promise<boolean>>[] = [];
    for (let i = 0; i < total; i++) writes.push(Promise.resolve(b.processEvents([{ ...ev, auditID: `id-${i}` }])));
    expect(await Promise.all(writes)).toEqual(writes.map(() => true));
    await b.shutdown();
    const names = readdirSync(dir).sort();
    const backups = names.filter((n) => /^audit-.*\.log\.gz$/.test(n));
    // Two compressed backups (the newest), the current file, the unrelated file; the old backup is gone.
    expect(backups).toHaveLength(2);
    expect(names).toEqual([...backups, 'audit.log', 'other.log'].sort());
    expect(statSync(join(dir, 'audit.log')).size).toBeLessThanOrEqual(1024 * 1024);
    const ids = (text: string) =>
      text
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as AuditEvent).auditID);
    const newestText = gunzipSync(readFileSync(join(dir, backups[1]!)));
    expect(newestText.length).toBeLessThanOrEqual(1024 * 1024);
    expect(newestText.length).toBeGreaterThan(1024 * 1024 - line);
    const newest = ids(newestText.toString());
    const current = ids(readFileSync(join(dir, 'audit.log'), 'utf8'));
    // Nothing lost or reordered across the last rotation.
    expect([...newest, ...current]).toEqual(
      Array.from(
        { length: newest.length + current.length },
        (_, i) => `id-${total - newest.length - current.length + i}`,
      ),
    );
  });

  it('fails a write larger than the file alone; the writes queued with it land, in order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-oversize-'));
    const file = new RotatingFile(
      join(dir, 'audit.log'),
      { maxSizeMB: 1, maxBackups: 0, maxAgeDays: 0, compress: false },
      quiet,
    );
    await file.open();
    const first = file.write('one\n');
    // These three arrive while the first is written: they go out together.
    const queued = [file.write('two\n'), file.write('x'.repeat(1024 * 1024 + 1)), file.write('three\n')];
    await first;
    const results = await Promise.allSettled(queued);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toContain('exceeds maximum file size');
    await file.close();
    expect(readFileSync(join(dir, 'audit.log'), 'utf8')).toBe('one\ntwo\nthree\n');
  });
});
