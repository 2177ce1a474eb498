/**
 * Bad input never gets a 5xx: thousands of generated bad requests (a fixed seed, so a failure replays) over every
 * verb, content type, path shape and query parameter, against a real in-process server over real HTTPS. Asserts, for
 * every request: an answer (no dropped connection), no 5xx, and, when the request was refused, that the store
 * revision did not move (nothing created or changed). Then that the server still answers. The counts by status are
 * printed. A few named cases (NUL characters, deep nesting, PUT without a name, path traversal) are asserted exactly.
 *
 * Requests go out one at a time on a keep-alive connection with their path written byte for byte (no URL
 * normalization by the client: `..` reaches the server as written).
 */
import { Agent, request as httpsRequest } from 'node:https';

import { startTestServer, type TestServer } from '../../testing/test-server';

/** The number of generated requests (a few ms each; about 15 s in all on a loaded 2-CPU machine). */
const COUNT = 1500;
const SEED = 0x17f00d;

interface Answer {
  status: number;
  text: string;
  json: { code?: number; message?: string; metadata?: { resourceVersion?: string } } | undefined;
}

let s: TestServer;
let agent: Agent;
let port: number;

/** One request with the path sent exactly as written. */
function raw(
  method: string,
  path: string,
  body?: Buffer | string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body);
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        ca: s.ca,
        headers: { ...(payload ? { 'content-length': String(payload.length) } : {}), ...headers },
        timeout: 20000,
      },
      (res) => {
        if (res.statusCode === 200 && /\/watch\/|[?&]watch=(1|true)/.test(path)) {
          // A watch that was accepted: its answer is the stream's start; the stream itself is not read.
          resolve({ status: 200, text: '', json: undefined });
          res.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: Answer['json'];
          try {
            json = JSON.parse(text) as Answer['json'];
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 20 s')));
    req.on('error', reject);
    req.end(payload);
  });
}

/** The store's revision now: a list read without a resourceVersion is served by the store at its current revision. */
/**
 * Every object the generated requests could reach (their uid and resourceVersion), cluster-wide. The API server's own
 * background writes (leases, the endpoints of the kubernetes service) are in none of these.
 */
async function fingerprint(): Promise<string> {
  const parts: string[] = [];
  for (const path of [
    '/api/v1/namespaces',
    '/api/v1/configmaps',
    '/api/v1/secrets',
    '/api/v1/pods',
    '/api/v1/services',
    '/apis/apps/v1/deployments',
    '/apis/rbac.authorization.platform/v1/roles',
  ]) {
    const r = await raw('GET', path);
    expect(r.status).toBe(200);
    const items = (r.json as { items?: { metadata: { uid: string; resourceVersion: string } }[] }).items ?? [];
    parts.push(path, ...items.map((o) => `${o.metadata.uid}@${o.metadata.resourceVersion}`));
  }
  return parts.join(' ');
}

/** mulberry32: a small seeded generator. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const deepArray = (n: number): string => '['.repeat(n) + ']'.repeat(n);
const deepObject = (n: number): string => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
const deepYaml = (n: number): string => Array.from({ length: n }, (_, i) => `${' '.repeat(i)}a:`).join('\n') + ' 1\n';

beforeAll(async () => {
  s = await startTestServer();
  port = Number(new URL(s.url).port);
  agent = new Agent({ keepAlive: true, maxSockets: 1 });
  for (const [path, body] of [
    ['/api/v1/namespaces', { metadata: { name: 'fz' } }],
    ['/api/v1/namespaces/fz/configmaps', { metadata: { name: 'cm' }, data: { a: 'b' } }],
    ['/api/v1/namespaces/fz/secrets', { metadata: { name: 'sec' }, stringData: { p: 'q' } }],
    ['/apis/apps/v1/namespaces/fz/deployments', deployment('dep')],
  ] as const) {
    const r = await raw('POST', path, JSON.stringify(body), { 'content-type': 'application/json' });
    expect(r.status).toBe(201);
  }
}, 90000);

afterAll(async () => {
  agent?.destroy();
  await s?.stop();
});

function deployment(name: string): object {
  return {
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    },
  };
}

describe('named bad inputs', () => {
  test('NUL characters in names and namespaces: 400 naming the name, for every verb', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/namespaces/fz/configmaps/a%00b'],
      ['PUT', '/api/v1/namespaces/fz/configmaps/a%00b'],
      ['DELETE', '/api/v1/namespaces/fz/configmaps/a%00b'],
      ['PATCH', '/api/v1/namespaces/fz/configmaps/a%00b'],
      ['GET', '/api/v1/namespaces/f%00z/configmaps/cm'],
      ['GET', '/api/v1/namespaces/f%00z'],
      ['DELETE', '/api/v1/namespaces/f%00z'],
      ['POST', '/api/v1/namespaces/f%00z/configmaps'],
    ] as const) {
      const body = method === 'GET' || method === 'DELETE' ? undefined : JSON.stringify({ metadata: { name: 'a\0b' } });
      const r = await raw(method, path, body, { 'content-type': 'application/merge-patch+json' });
      expect([r.status, r.json?.message]).toEqual([
        400,
        expect.stringMatching(/parameter invalid: ".*\\u0000.*": may not contain NUL/),
      ]);
    }
  });

  test('deeply nested bodies: 400 for objects, YAML, Protobuf, DeleteOptions and every patch type', async () => {
    const cm = '/api/v1/namespaces/fz/configmaps';
    const cases: [string, string, string, Buffer | string][] = [
      ['POST', cm, 'application/json', `{"metadata":{"name":"d"},"data":${deepArray(5000)}}`],
      ['POST', cm, 'application/json', `{"metadata":{"name":"d"},"data":${deepObject(5000)}}`],
      ['POST', cm, 'application/yaml', `metadata: {name: d}\ndata: ${deepArray(5000)}`],
      ['POST', cm, 'application/yaml', `metadata: {name: d}\ndata:\n${deepYaml(2000)}`],
      ['PUT', `${cm}/cm`, 'application/json', `{"metadata":{"name":"cm"},"data":${deepObject(5000)}}`],
      ['DELETE', `${cm}/cm`, 'application/json', `{"kind":"DeleteOptions","preconditions":${deepObject(5000)}}`],
      ['PATCH', `${cm}/cm`, 'application/merge-patch+json', `{"data":${deepObject(5000)}}`],
      ['PATCH', `${cm}/cm`, 'application/strategic-merge-patch+json', `{"data":${deepObject(5000)}}`],
      [
        'PATCH',
        `${cm}/cm`,
        'application/json-patch+json',
        `[{"op":"add","path":"/data/x","value":${deepObject(5000)}}]`,
      ],
      [
        'PATCH',
        `${cm}/cm?fieldManager=f`,
        'application/apply-patch+yaml',
        `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":${deepObject(5000)}}`,
      ],
      // Protobuf: groups nested 200000 deep in an unknown field of the envelope, after the magic.
      [
        'POST',
        cm,
        'application/vnd.kubernetes.protobuf',
        Buffer.concat([Buffer.from('k8s\0', 'latin1'), Buffer.alloc(200000, 0x7b)]),
      ],
      [
        'POST',
        cm,
        'application/vnd.kubernetes.protobuf',
        Buffer.concat([
          Buffer.from('k8s\0', 'latin1'),
          Buffer.from([0x12, 0xfe, 0xff, 0x0f]),
          Buffer.alloc(262142, 0x7b),
        ]),
      ],
      // A JSON patch that builds a deep value from a shallow body: refused when the result is decoded.
      [
        'PATCH',
        `${cm}/cm`,
        'application/json-patch+json',
        JSON.stringify(
          Array.from({ length: 150 }, (_, i) => ({
            op: 'add',
            path: `/metadata/annotations${'/a'.repeat(i)}`,
            value: {},
          })),
        ),
      ],
    ];
    for (const [method, path, type, body] of cases) {
      const r = await raw(method, path, body, { 'content-type': type });
      expect([method, type, [400, 422].includes(r.status) ? 'refused' : r.status]).toEqual([method, type, 'refused']);
    }
    const ok = await raw('GET', `${cm}/cm`);
    expect(ok.status).toBe(200);
    expect(s.errors).toEqual([]);
  });

  test('a PUT whose body names another object (or none, or another namespace) is 400 and changes nothing', async () => {
    // Not the store's revision: the server's own controllers (APIService status, flow control) write at any time.
    const before = await fingerprint();
    for (const [body, message] of [
      ['{}', 'the name of the object () does not match the name on the URL (cm)'],
      ['{"metadata":{"name":"other"}}', 'the name of the object (other) does not match the name on the URL (cm)'],
      [
        '{"metadata":{"name":"cm","namespace":"default"}}',
        'the namespace of the object (default) does not match the namespace on the URL (fz)',
      ],
    ] as const) {
      const r = await raw('PUT', '/api/v1/namespaces/fz/configmaps/cm', body, { 'content-type': 'application/json' });
      expect([r.status, r.json?.message]).toEqual([400, message]);
    }
    expect(await fingerprint()).toBe(before);
    const cm = await raw('GET', '/api/v1/namespaces/fz/configmaps/cm');
    expect(cm.text).toContain('"data":{"a":"b"}');
  });

  test('path traversal and doubled slashes never reach another path', async () => {
    for (const path of [
      '/api/v1/namespaces/fz/configmaps/../secrets',
      '/api/v1/namespaces/fz/configmaps/%2e%2e/secrets',
      '/api/v1/namespaces/fz/configmaps/%2E%2E/secrets/sec',
      '/api/v1/namespaces/fz/configmaps/..',
      '/api/v1/namespaces/fz/configmaps/.',
      '/api/v1/namespaces/fz/configmaps/%2e',
      '/api/v1/namespaces/fz/configmaps/.%2e',
      '/api/v1/namespaces//fz/secrets/sec',
      '/api/v1//namespaces/fz/secrets',
      '/api/v1/namespaces/fz/secrets//sec',
      '//api/v1/namespaces/fz/secrets/sec',
      '/api/./v1/namespaces/fz/secrets',
      '/apis/apps/v1/namespaces/fz/deployments/../../../../api/v1/namespaces/fz/secrets',
      '/api/v1/namespaces/fz/configmaps/cm%2F..%2F..%2Fsecrets',
    ]) {
      for (const method of ['GET', 'DELETE']) {
        const r = await raw(method, path);
        expect([path, method, [400, 404].includes(r.status) ? 'refused' : r.status]).toEqual([path, method, 'refused']);
        expect(r.text).not.toContain('"kind":"Secret');
      }
    }
    expect((await raw('GET', '/api/v1/namespaces/fz/secrets/sec')).status).toBe(200);
  });
});

describe('fuzz', () => {
  test(`${COUNT} generated bad requests (seed ${SEED}): no 5xx, no dropped connection, refused ones change nothing`, async () => {
    const rand = rng(SEED);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;

    const badNames = [
      'a%00b',
      '%00',
      'x%00',
      '..',
      '.',
      '%2e%2e',
      '%2E',
      '.%2e',
      'a%2Fb',
      '%25',
      'a%zzb',
      '%',
      'A_B',
      'x'.repeat(300),
      '%E2%98%83',
      '%C0%AE%C0%AE',
      'a%0Ab',
      'a%09b',
      '%F0%9F%98%80',
      '-x-',
      'a%20b',
      '%u0000',
      'cm%3F',
      'cm%23x',
    ];
    const goodNames = ['cm', 'sec', 'dep', 'missing'];
    const namespaces = ['fz', 'f%00z', '..', '%2e%2e', 'default', 'nope', 'F_Z', 'x'.repeat(80), '%ff'];
    const resources = [
      ['api/v1', 'configmaps'],
      ['api/v1', 'secrets'],
      ['api/v1', 'pods'],
      ['api/v1', 'services'],
      ['apis/apps/v1', 'deployments'],
      ['apis/rbac.authorization.platform/v1', 'roles'],
      ['api/v1', 'nosuchthings'],
      ['apis/nosuch.group/v1', 'things'],
    ] as const;
    const subresources = ['status', 'scale', 'binding', 'log', 'eviction', 'nope', '..', '%00'];
    const pathShape = (): string => {
      const [gv, res] = rand() < 0.6 ? resources[Math.floor(rand() * 3)]! : pick(resources);
      const ns = rand() < 0.7 ? 'fz' : pick(namespaces);
      const name = rand() < 0.5 ? pick(badNames) : pick(goodNames);
      switch (Math.floor(rand() * 12)) {
        case 0:
          return `/${gv}/${res}`;
        case 1:
          return `/${gv}/namespaces/${ns}/${res}`;
        case 2:
          return `/${gv}/namespaces/${ns}/${res}/${name}/${pick(subresources)}`;
        case 3:
          return `/${gv}/namespaces/${ns}`;
        case 4:
          return `/api/v1/namespaces/${name}`;
        case 5:
          return `/${gv}/watch/namespaces/${ns}/${res}/${name}`;
        case 6:
          return `/${gv}/namespaces/${ns}/${res}/${name}/../../secrets/sec`;
        case 7:
          return `/${gv}//namespaces/${ns}/${res}//${name}`;
        case 8:
          return `/${gv}/namespaces/${ns}/${res}/${name}/${pick(subresources)}/extra/segments`;
        case 9:
          return pick([
            '/api',
            '/apis',
            '/api/v1',
            '/apis/apps',
            '/api/v9',
            '/apis/apps/v1/',
            '/api/%00',
            '/apis/%2e%2e/v1',
          ]);
        default:
          return `/${gv}/namespaces/${ns}/${res}/${name}`;
      }
    };
    const queries = [
      '',
      'resourceVersion=abc',
      'resourceVersion=-1',
      'resourceVersion=99999999999999999999999',
      'resourceVersionMatch=Exact',
      'resourceVersionMatch=bogus&resourceVersion=1',
      'limit=-1',
      'limit=abc',
      'limit=1&continue=garbage',
      'continue=%00',
      'fieldSelector=metadata.name%3D%3D%00',
      'fieldSelector=(((',
      'fieldSelector=spec.nope=1',
      'labelSelector=a%20in%20(',
      'labelSelector=%00',
      'labelSelector=a!=b,,',
      'watch=1&timeoutSeconds=abc',
      'watch=1&timeoutSeconds=0',
      'watch=true&resourceVersion=abc',
      'watch=1&allowWatchBookmarks=maybe&timeoutSeconds=1',
      'dryRun=Bogus',
      'dryRun=All&dryRun=x',
      'fieldManager=' + 'm'.repeat(200),
      'fieldManager=%00',
      'force=maybe',
      'force=true',
      'propagationPolicy=Sideways',
      'gracePeriodSeconds=-5x',
      'gracePeriodSeconds=99999999999999999999',
      'orphanDependents=perhaps',
      'pretty=%00',
      'timeout=abc',
      'includeObject=Nope',
      'a=%zz',
      '%00=%00',
      'resourceVersion=1&resourceVersion=2',
    ];
    const types = [
      'application/json',
      'application/yaml',
      'application/vnd.kubernetes.protobuf',
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/strategic-merge-patch+json',
      'application/apply-patch+yaml',
      'text/plain',
      'application/json; charset=latin1',
      'multipart/form-data; boundary=x',
      '',
      '%00',
      'application/',
    ];
    const kinds = ['ConfigMap', 'Secret', 'Deployment', 'Pod', 'Nope', '', 'DeleteOptions', 'Status'];
    const bodyOf = (): string | Buffer | undefined => {
      switch (Math.floor(rand() * 20)) {
        case 0:
          return undefined;
        case 1:
          return '';
        case 2:
          return deepArray(2000 + Math.floor(rand() * 4000));
        case 3:
          return `{"metadata":{"name":"cm"},"data":${deepObject(200 + Math.floor(rand() * 3000))}}`;
        case 4:
          return `[{"op":"add","path":"/data/x","value":${deepObject(500)}}]`;
        case 5:
          return '{}';
        case 6:
          return '{"metadata":{"name":"cm","namespace":"other"},"data":{"a":"c"}}';
        case 7:
          return `{"apiVersion":"v1","kind":"${pick(kinds)}","metadata":{"name":"${pick(['cm', 'x', '', '..'])}"}}`;
        case 8:
          return '{"metadata":{"name":"a\\u0000b"}}';
        case 9:
          return '{"metadata":{"name":"cm","resourceVersion":"abc"},"data":{"a":1}}';
        case 10:
          return Buffer.from(Array.from({ length: 1 + Math.floor(rand() * 200) }, () => Math.floor(rand() * 256)));
        case 11:
          // The protobuf envelope's magic, then garbage (or a truncated Unknown).
          return Buffer.concat([
            Buffer.from([0x6b, 0x38, 0x73, 0x00]),
            Buffer.from(Array.from({ length: Math.floor(rand() * 64) }, () => Math.floor(rand() * 256))),
          ]);
        case 12:
          return '[{"op":"move","from":"/metadata","path":"/metadata/x"},{"op":"remove","path":"/"}]';
        case 13:
          return '[{"op":"test","path":"/metadata/name","value":"nope"}]';
        case 14:
          return 'a: &a [*a]\n';
        case 15:
          return `metadata:\n  name: cm\ndata:\n${deepYaml(150)}`;
        case 16:
          return '{"metadata":{"name":"cm"},"data":{"a":"b"},"spec":{"replicas":"many"}}';
        case 17:
          return `{"metadata":{"name":"cm"},"data":{"${'\\u0000'.repeat(3)}":"x"},"x":1e999999}`;
        case 18:
          return '{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":"soon","propagationPolicy":"Up"}';
        default:
          return `{"metadata":{"name":"cm", "labels": {"bad key!": "${'v'.repeat(100)}"}}, "data": ${pick(['null', '[]', '"s"', '{"k": {"n": 1}}'])}}`;
      }
    };
    const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND'];

    const counts = new Map<number, number>();
    const failures: string[] = [];
    let accepted = 0;
    let base = await fingerprint();
    let batch: string[] = [];
    let slowest = 0;
    for (let i = 0; i < COUNT; i++) {
      const method = pick(methods);
      const q = pick(queries);
      const path = pathShape() + (q ? `?${q}` : '');
      const body = method === 'GET' || method === 'HEAD' ? (rand() < 0.1 ? bodyOf() : undefined) : bodyOf();
      const type = pick(types);
      const headers: Record<string, string> = type ? { 'content-type': type } : {};
      if (rand() < 0.2)
        headers.accept = pick([
          'application/yaml',
          'application/vnd.kubernetes.protobuf',
          'text/html',
          '*/*;q=x',
          'application/json;as=Table;v=v1;g=meta.platform',
        ]);
      const what = `#${i} ${method} ${path} [${type}] ${body === undefined ? '-' : String(body).slice(0, 60)}`;
      let r: Answer;
      const t0 = Date.now();
      try {
        r = await raw(method, path, body, headers);
        slowest = Math.max(slowest, Date.now() - t0);
      } catch (err) {
        failures.push(`${what}: no answer: ${(err as Error).message}`);
        continue;
      }
      counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
      if (r.status >= 500) failures.push(`${what}: ${r.status} ${r.text.slice(0, 200)}`);
      if (!['GET', 'HEAD', 'OPTIONS'].includes(method)) {
        if (r.status >= 200 && r.status < 300) {
          accepted++;
          base = await fingerprint(); // what an accepted write changed is not held against the refused ones
        } else {
          batch.push(`${what}: ${r.status}`);
        }
      }
      if (batch.length >= 25 || i === COUNT - 1) {
        const now = await fingerprint();
        if (now !== base) failures.push(`refused requests changed objects:\n${batch.join('\n')}`);
        base = now;
        batch = [];
      }
      if (failures.length > 20) break;
    }
    const byStatus = [...counts.entries()].sort((a, b) => a[0] - b[0]).map(([k, v]) => `${k}: ${v}`);
    console.log(
      `fuzz (seed ${SEED}, ${COUNT} requests) by status: ${byStatus.join(', ')}; accepted writes: ${accepted}; slowest answer ${slowest} ms`,
    );
    expect(failures).toEqual([]);
    // The server is unharmed: it still answers, and its objects are as they were.
    expect((await raw('GET', '/readyz')).status).toBe(200);
    expect((await raw('GET', '/api/v1/namespaces/default')).status).toBe(200);
    expect(s.errors).toEqual([]);
  }, 120000);
});
