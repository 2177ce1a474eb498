/**
 * The `--manifest-url` source against a real HTTP server: `--manifest-url-header` values (comma-separated, the flag
 * repeated, one name several times) reach the server; the answer becomes static pods; a failed fetch keeps the
 * previous set and an empty answer means no pods.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';

import { type Pod } from '@platform/api';
import { parseCommandLine } from '@platform/common';
import { testLogger } from '@platform/apiserver';

import { nodeAgentCommand } from '../cmd/main';
import { fetchManifests, runHttpSource } from './http-source';

const MANIFEST = `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers:
  - {name: c, image: busybox, command: [sleep, "3600"]}
---
apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  containers:
  - {name: c, image: busybox, command: [sleep, "3600"]}
`;

let server: Server;
let url: string;
let answer: { status: number; body: string } = { status: 200, body: MANIFEST };
const seen: IncomingMessage['headers'][] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(answer.status, { 'Content-Type': 'application/yaml' }).end(answer.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pods`;
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

function headersOf(argv: string[]): string[] {
  const c = nodeAgentCommand();
  const r = parseCommandLine(c.cmd, c.groups, [`--manifest-url=${url}`, ...argv], () => {});
  expect(r.errors).toEqual([]);
  return c.agent.values.manifestUrlHeader;
}

test('the headers of --manifest-url-header reach the server, and the answer becomes static pods', async () => {
  const headers = headersOf([
    '--manifest-url-header',
    'a:hello,b:again,c:world',
    '--manifest-url-header',
    'b:beautiful',
  ]);
  expect(headers).toEqual(['a:hello', 'b:again', 'c:world', 'b:beautiful']);
  const pods = await fetchManifests(url, headers, 'node-1');
  const h = seen[seen.length - 1]!;
  expect([h.a, h.b, h.c]).toEqual(['hello', 'again, beautiful', 'world']);
  expect(pods.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`)).toEqual([
    'default/web-node-1',
    'default/db-node-1',
  ]);
  expect(pods[0]!.metadata?.annotations?.['kubernetes.io/config.source']).toBe('http');
  expect(pods[0]!.spec?.nodeName).toBe('node-1');
});

test('a header without a colon is an error naming the option', () => {
  const c = nodeAgentCommand();
  const r = parseCommandLine(c.cmd, c.groups, ['--manifest-url-header', 'novalue'], () => {});
  expect(r.errors.map((e) => e.message).join('\n')).toMatch(/--manifest-url-header/);
});

test('a failed fetch keeps the previous pods; an empty answer means none', async () => {
  const calls: Pod[][] = [];
  const ac = new AbortController();
  answer = { status: 200, body: MANIFEST };
  runHttpSource(url, [], 'node-1', 100, (pods) => calls.push(pods), testLogger(), ac.signal);
  const until = async (what: string, f: () => boolean): Promise<void> => {
    const deadline = Date.now() + 30_000;
    while (!f()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  try {
    await until('the pods', () => calls.length > 0);
    answer = { status: 500, body: 'broken' };
    const failedFrom = seen.length;
    await until('three failed fetches', () => seen.length >= failedFrom + 3);
    // No pod set came from the failures: the agent keeps what it had.
    expect(calls.every((c) => c.length === 2)).toBe(true);
    answer = { status: 200, body: '' };
    await until('an empty set', () => calls.some((c) => c.length === 0));
  } finally {
    ac.abort();
  }
});
