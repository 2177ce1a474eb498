/**
 * Shared pieces of the conformance suite (one file per section of Document 1, each run on both stores): one test
 * server per store per file, small objects, and a watch reader over HTTP.
 */
import { request as httpsRequest } from 'node:https';

import { type ApiServerConfig } from '../api-server';
import { startTestServer, type TestServer, type TestStore } from '../../testing/test-server';

/** The stores every conformance case runs on. */
export const STORES: [TestStore][] = [['sqlite'], ['etcd']];

/**
 * One server for the enclosing `describe`, stopped after it (afterAll), which asserts that it logged no errors.
 * The server starts as soon as the file is collected, so that the servers of a file (one per store) start
 * together instead of one after the other; beforeAll waits for it. Returns a getter (the server exists only once
 * beforeAll ran).
 */
export function useServer(store: TestStore, configure?: (c: ApiServerConfig) => void): () => TestServer {
  let t: TestServer | undefined;
  const starting = startTestServer({ store, ...(configure ? { configure } : {}) });
  // A failed start is reported by beforeAll, not as an unhandled rejection.
  starting.catch(() => {});
  beforeAll(async () => {
    t = await starting;
  }, 120_000);
  afterAll(async () => {
    const running = t ?? (await starting.catch(() => undefined));
    if (!running) return;
    const errors = running.errors;
    await running.stop();
    expect(errors).toEqual([]);
  }, 30_000);
  return () => {
    if (!t) throw new Error('the test server is not running');
    return t;
  };
}

/** A ConfigMap manifest. */
export function configMap(
  name: string,
  data: Record<string, string> = { a: '1' },
  labels?: Record<string, string>,
): { apiVersion: string; kind: string; metadata: Record<string, unknown>; data: Record<string, string> } {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(labels ? { labels } : {}) }, data };
}

/** A Namespace manifest. */
export function namespace(name: string): { apiVersion: string; kind: string; metadata: { name: string } } {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
}

let counter = 0;
/** A name unique within this test file (DNS-1123). */
export function uniqueName(prefix: string): string {
  counter++;
  return `${prefix}-${counter}`;
}

/** Creates a namespace of its own for a test, so that lists and watches see only that test's objects. */
export async function freshNamespace(t: TestServer, prefix = 'ns'): Promise<string> {
  const name = uniqueName(prefix);
  const r = await t.request('POST', '/api/v1/namespaces', { body: namespace(name) });
  if (r.status !== 201) throw new Error(`creating namespace ${name}: ${r.status} ${r.text}`);
  return name;
}

/** Creates an object and returns its body; throws when the server did not answer 201. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded test responses are read freely
export async function mustCreate(t: TestServer, path: string, body: unknown): Promise<any> {
  const r = await t.request('POST', path, { body });
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.text}`);
  return r.json;
}

/** Names of the items of a list body. */
export function itemNames(list: { items?: { metadata: { name: string } }[] }): string[] {
  return (list.items ?? []).map((i) => i.metadata.name);
}

/** One decoded watch event. */
export interface WatchEventJson {
  type: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded test responses are read freely
  object: any;
}

/** An open watch over HTTP: events decoded as they arrive. */
export interface WatchReader {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  events: WatchEventJson[];
  /** Resolves once `n` events arrived (or rejects after `timeoutMs`, naming what arrived). */
  waitFor(n: number, timeoutMs?: number): Promise<WatchEventJson[]>;
  /** Resolves once an event matches (or rejects after `timeoutMs`). */
  waitUntil(f: (e: WatchEventJson) => boolean, timeoutMs?: number): Promise<WatchEventJson>;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  close(): void;
}

/** Opens `path` (a watch URL) and resolves once the response headers arrived. */
export function openWatch(t: TestServer, path: string, headers: Record<string, string> = {}): Promise<WatchReader> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${t.url}${path}`, { ca: t.ca, headers }, (res) => {
      const events: WatchEventJson[] = [];
      const listeners = new Set<() => void>();
      let isEnded = false;
      let body = '';
      const ended = new Promise<void>((done) => {
        const finish = (): void => {
          isEnded = true;
          for (const l of [...listeners]) l();
          done();
        };
        res.on('end', finish);
        res.on('close', finish);
      });
      let buf = '';
      res.on('data', (c: Buffer) => {
        buf += c.toString('utf8');
        body += res.statusCode === 200 ? '' : c.toString('utf8');
        if (res.statusCode !== 200) return;
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.trim()) events.push(JSON.parse(line) as WatchEventJson);
        }
        for (const l of [...listeners]) l();
      });
      res.on('error', () => {});
      const wait = <T>(f: () => T | undefined, timeoutMs: number, what: () => string): Promise<T> =>
        new Promise((ok, fail) => {
          const check = (): void => {
            const v = f();
            if (v !== undefined) {
              cleanup();
              ok(v);
            } else if (isEnded) {
              cleanup();
              fail(new Error(`the watch ended before ${what()}: got ${JSON.stringify(events.map((e) => e.type))}`));
            }
          };
          const timer = setTimeout(() => {
            cleanup();
            fail(new Error(`timed out waiting for ${what()}: got ${JSON.stringify(events)} ${body}`));
          }, timeoutMs);
          const cleanup = (): void => {
            clearTimeout(timer);
            listeners.delete(check);
          };
          listeners.add(check);
          check();
        });
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        events,
        ended,
        waitFor: (n, timeoutMs = 10_000) =>
          wait(
            () => (events.length >= n ? events.slice(0, n) : undefined),
            timeoutMs,
            () => `${n} events`,
          ),
        waitUntil: (f, timeoutMs = 10_000) =>
          wait(
            () => events.find(f),
            timeoutMs,
            () => 'a matching event',
          ),
        close: () => req.destroy(),
      });
    });
    req.on('error', (e) => reject(e));
    req.end();
  });
}

/** `type name` of each event (BOOKMARKs left out), for compact assertions. */
export function describeEvents(events: WatchEventJson[]): string[] {
  return events.filter((e) => e.type !== 'BOOKMARK').map((e) => `${e.type} ${e.object?.metadata?.name as string}`);
}
