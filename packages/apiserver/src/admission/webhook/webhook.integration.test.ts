/**
 * Admission webhooks against a test HTTPS server on 127.0.0.1: mutation by JSONPatch, refusal, failure policies
 * (a webhook that times out, one that answers garbage), selectors, reinvocation, dry-run, the CA bundle, the
 * API server's client certificate, and the webhooks' warnings as `Warning` headers.
 */
import { createServer, request as httpsRequest, type Server } from 'node:https';
import { type AddressInfo } from 'node:net';
import { type TLSSocket } from 'node:tls';

import { generateSelfSignedCertKey } from '@platform/common';

import { startTestServer, type TestResponse, type TestServer } from '../../testing/test-server';
import { DEFAULT_ADMISSION_SETTINGS } from '../server-admission';

interface Review {
  apiVersion: string;
  request: {
    uid: string;
    operation: string;
    dryRun: boolean;
    name?: string;
    namespace?: string;
    object?: { metadata?: { labels?: Record<string, string> } };
    userInfo: { username?: string };
  };
}

/** What each path of the webhook server does with a review. */
type Behaviour = (r: Review) => unknown;

let hook: Server;
let hookUrl: string;
let hookCa: string;
const calls: { path: string; review: Review; clientCN: string }[] = [];
const behaviours = new Map<string, Behaviour>();

const allow = (r: Review, extra: Record<string, unknown> = {}): unknown => ({
  apiVersion: r.apiVersion,
  kind: 'AdmissionReview',
  response: { uid: r.request.uid, allowed: true, ...extra },
});
const patch = (ops: unknown[]): Record<string, unknown> => ({
  patchType: 'JSONPatch',
  patch: Buffer.from(JSON.stringify(ops)).toString('base64'),
});

let s: TestServer;
let proxyClientCN: string;

beforeAll(async () => {
  const serving = await generateSelfSignedCertKey({
    host: '127.0.0.1',
    alternateIPs: ['127.0.0.1'],
    alternateDNS: ['hooks.hooked.svc'],
  });
  const client = await generateSelfSignedCertKey({ host: 'front-proxy-client' });
  proxyClientCN = 'front-proxy-client@';
  hookCa = serving.certPem;
  hook = createServer({ cert: serving.certPem, key: serving.keyPem, requestCert: true, rejectUnauthorized: false });
  hook.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Review;
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      calls.push({ path: req.url ?? '', review, clientCN: String(peer?.subject?.CN ?? '') });
      const answer = (behaviours.get(req.url ?? '') ?? allow)(review);
      if (answer === 'hang') return; // never answers: the API server's time-out must act
      res.setHeader('Content-Type', 'application/json');
      res.end(typeof answer === 'string' ? answer : JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  hookUrl = `https://127.0.0.1:${(hook.address() as AddressInfo).port}`;
  s = await startTestServer((c) => {
    c.admission = {
      plugins: ['NamespaceLifecycle', 'MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook'],
      settings: { ...DEFAULT_ADMISSION_SETTINGS, proxyClientCert: { cert: client.certPem, key: client.keyPem } },
    };
  });
  await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'hooked', labels: { hooks: 'on' } } } });
  await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'quiet' } } });
}, 30_000);

afterAll(async () => {
  await s?.stop();
  hook?.closeAllConnections();
  await new Promise((resolve) => hook?.close(resolve));
});

beforeEach(() => {
  calls.length = 0;
  behaviours.clear();
});

type Hook = Record<string, unknown> & { name: string; path: string };

function webhook(h: Hook): Record<string, unknown> {
  const { path, ...rest } = h;
  return {
    clientConfig: { url: `${hookUrl}${path}`, caBundle: Buffer.from(hookCa).toString('base64') },
    rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    timeoutSeconds: 2,
    ...rest,
  };
}

/** Creates a configuration and waits until the watch cache (what admission reads) has it. */
async function configure(kind: 'mutating' | 'validating', name: string, hooks: Hook[]): Promise<() => Promise<void>> {
  const path = `/apis/admissionregistration.platform/v1/${kind}webhookconfigurations`;
  const r = await s.request('POST', path, { body: { metadata: { name }, webhooks: hooks.map(webhook) } });
  expect(r.status).toBe(201);
  for (;;) {
    const l = await s.request('GET', `${path}?resourceVersion=0`);
    if (l.json.items.some((i: { metadata: { name: string } }) => i.metadata.name === name)) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return async () => {
    await s.request('DELETE', `${path}/${name}`);
    for (;;) {
      const l = await s.request('GET', `${path}?resourceVersion=0`);
      if (!l.json.items.some((i: { metadata: { name: string } }) => i.metadata.name === name)) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
}

const cm = (name: string, labels: Record<string, string> = {}, ns = 'hooked', query = ''): Promise<TestResponse> =>
  s.request('POST', `/api/v1/namespaces/${ns}/configmaps${query}`, { body: { metadata: { name, labels } } });

it('serves the webhook configuration kinds in discovery and validates them', async () => {
  const d = await s.request('GET', '/apis/admissionregistration.platform/v1');
  expect(d.json.resources.map((r: { name: string }) => r.name)).toEqual([
    'mutatingwebhookconfigurations',
    'validatingwebhookconfigurations',
  ]);
  const bad = await s.request('POST', '/apis/admissionregistration.platform/v1/validatingwebhookconfigurations', {
    body: {
      metadata: { name: 'bad' },
      webhooks: [
        {
          name: 'short.name',
          clientConfig: { url: 'http://insecure.example.com' },
          sideEffects: 'Some',
          admissionReviewVersions: ['v9'],
          timeoutSeconds: 60,
        },
      ],
    },
  });
  expect(bad.status).toBe(422);
  expect(bad.json.details.causes.map((c: { field: string }) => c.field).sort()).toEqual([
    'webhooks[0].admissionReviewVersions',
    'webhooks[0].clientConfig.url',
    'webhooks[0].name',
    'webhooks[0].sideEffects',
    'webhooks[0].timeoutSeconds',
  ]);
});

it('applies a mutating webhook patch and a validating refusal, over TLS with the client certificate', async () => {
  behaviours.set('/mutate', (r) => allow(r, patch([{ op: 'add', path: '/data', value: { added: 'yes' } }])));
  behaviours.set('/validate', (r) =>
    r.request.object?.metadata?.labels?.deny === 'true'
      ? {
          apiVersion: r.apiVersion,
          kind: 'AdmissionReview',
          response: { uid: r.request.uid, allowed: false, status: { code: 403, message: 'denied by policy' } },
        }
      : allow(r),
  );
  const undoM = await configure('mutating', 'm', [{ name: 'mutate.test.example.com', path: '/mutate' }]);
  const undoV = await configure('validating', 'v', [{ name: 'validate.test.example.com', path: '/validate' }]);
  try {
    const ok = await cm('one');
    expect(ok.status).toBe(201);
    expect(ok.json.data).toEqual({ added: 'yes' });
    expect(calls.map((c) => c.path)).toEqual(['/mutate', '/validate']);
    const review = calls[0]?.review;
    expect(review?.apiVersion).toBe('admission.platform/v1');
    expect(review?.request).toMatchObject({ operation: 'CREATE', namespace: 'hooked', name: 'one', dryRun: false });
    expect(review?.request.userInfo.username).toBe('system:anonymous');
    expect(calls[0]?.clientCN.startsWith(proxyClientCN)).toBe(true);
    const no = await cm('two', { deny: 'true' });
    expect([no.status, no.json.reason, no.json.message]).toEqual([
      403,
      'Forbidden',
      'admission webhook "validate.test.example.com" denied the request: denied by policy',
    ]);
    expect((await s.request('GET', '/api/v1/namespaces/hooked/configmaps/two')).status).toBe(404);
  } finally {
    await undoM();
    await undoV();
  }
});

it('honours failurePolicy for a webhook that times out and one that answers garbage', async () => {
  behaviours.set('/hang', () => 'hang');
  behaviours.set('/garbage', () => 'this is not json');
  behaviours.set('/wrong-uid', (r) => ({
    apiVersion: r.apiVersion,
    kind: 'AdmissionReview',
    response: { uid: 'x', allowed: true },
  }));
  let undo = await configure('validating', 'fail', [
    { name: 'hang.test.example.com', path: '/hang', timeoutSeconds: 1, failurePolicy: 'Fail' },
  ]);
  let r = await cm('t1');
  expect(r.status).toBe(500);
  expect(r.json.message).toContain('failed calling webhook "hang.test.example.com"');
  expect(r.json.message).toContain('context deadline exceeded');
  await undo();
  undo = await configure('validating', 'fail', [
    { name: 'garbage.test.example.com', path: '/garbage', failurePolicy: 'Fail' },
  ]);
  r = await cm('t2');
  expect(r.status).toBe(500);
  expect(r.json.message).toContain('failed calling webhook "garbage.test.example.com"');
  expect(r.json.message).toContain('not valid JSON');
  await undo();
  undo = await configure('validating', 'fail', [
    { name: 'uid.test.example.com', path: '/wrong-uid', failurePolicy: 'Fail' },
  ]);
  r = await cm('t3');
  expect(r.status).toBe(500);
  expect(r.json.message).toContain('received an invalid AdmissionReview: expected response.uid=');
  await undo();
  undo = await configure('validating', 'ignore', [
    { name: 'hang.test.example.com', path: '/hang', timeoutSeconds: 1, failurePolicy: 'Ignore' },
    { name: 'garbage.test.example.com', path: '/garbage', failurePolicy: 'Ignore' },
  ]);
  r = await cm('t4');
  expect(r.status).toBe(201);
  await undo();
});

it('fails the call when the CA bundle does not verify the webhook', async () => {
  const other = await generateSelfSignedCertKey({ host: '127.0.0.1', alternateIPs: ['127.0.0.1'] });
  const undo = await configure('validating', 'wrong-ca', [
    {
      name: 'ca.test.example.com',
      path: '/any',
      clientConfig: { url: `${hookUrl}/any`, caBundle: Buffer.from(other.certPem).toString('base64') },
    },
  ]);
  const r = await cm('ca1');
  expect(r.status).toBe(500);
  expect(r.json.message).toContain('failed calling webhook "ca.test.example.com"');
  expect(calls).toEqual([]);
  await undo();
});

it('calls a webhook only for matching namespaces, objects and rules', async () => {
  const undo = await configure('validating', 'selectors', [
    {
      name: 'sel.test.example.com',
      path: '/sel',
      namespaceSelector: { matchLabels: { hooks: 'on' } },
      objectSelector: { matchExpressions: [{ key: 'skip', operator: 'DoesNotExist' }] },
    },
  ]);
  expect((await cm('s1')).status).toBe(201);
  expect((await cm('s2', {}, 'quiet')).status).toBe(201);
  expect((await cm('s3', { skip: 'yes' })).status).toBe(201);
  expect(
    (await s.request('POST', '/api/v1/namespaces/hooked/secrets', { body: { metadata: { name: 'x' } } })).status,
  ).toBe(201);
  expect(calls.map((c) => c.review.request.name)).toEqual(['s1']);
  await undo();
});

it('reinvokes an IfNeeded webhook when a later webhook changed the object', async () => {
  behaviours.set('/first', (r) => allow(r));
  behaviours.set('/second', (r) =>
    r.request.object?.metadata?.labels?.second
      ? allow(r)
      : allow(r, patch([{ op: 'add', path: '/metadata/labels/second', value: 'x' }])),
  );
  const undoA = await configure('mutating', 'a-first', [
    { name: 'first.test.example.com', path: '/first', reinvocationPolicy: 'IfNeeded' },
  ]);
  const undoB = await configure('mutating', 'b-second', [{ name: 'second.test.example.com', path: '/second' }]);
  const r = await cm('re1', { x: 'y' });
  expect(r.status).toBe(201);
  expect(r.json.metadata.labels).toEqual({ x: 'y', second: 'x' });
  expect(calls.map((c) => c.path)).toEqual(['/first', '/second', '/first']);
  await undoA();
  await undoB();
});

it('sends dry-run requests to NoneOnDryRun webhooks with dryRun set, and stores nothing', async () => {
  behaviours.set('/dry', (r) =>
    allow(r, patch([{ op: 'add', path: '/data', value: { dry: String(r.request.dryRun) } }])),
  );
  const undo = await configure('mutating', 'dry', [
    { name: 'dry.test.example.com', path: '/dry', sideEffects: 'NoneOnDryRun' },
  ]);
  const r = await cm('d1', {}, 'hooked', '?dryRun=All');
  expect([r.status, r.json.data]).toEqual([201, { dry: 'true' }]);
  expect(calls[0]?.review.request.dryRun).toBe(true);
  expect((await s.request('GET', '/api/v1/namespaces/hooked/configmaps/d1')).status).toBe(404);
  await undo();
});

it('refuses a patch that makes the object invalid', async () => {
  behaviours.set('/break', (r) => allow(r, patch([{ op: 'add', path: '/data', value: 'not a map' }])));
  const undo = await configure('mutating', 'break', [{ name: 'break.test.example.com', path: '/break' }]);
  const r = await cm('b1');
  expect(r.status).toBe(500);
  expect(r.json.message).toContain('the patched object is not valid');
  await undo();
});

it('reaches a webhook through a service: its endpoints, verified as <service>.<namespace>.svc', async () => {
  const port = Number(new URL(hookUrl).port);
  expect(
    (
      await s.request('POST', '/api/v1/namespaces/hooked/services', {
        body: { metadata: { name: 'hooks' }, spec: { ports: [{ name: 'https', port: 443, targetPort: port }] } },
      })
    ).status,
  ).toBe(201);
  expect(
    (
      await s.request('POST', '/api/v1/namespaces/hooked/endpoints', {
        body: {
          metadata: { name: 'hooks' },
          subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port }] }],
        },
      })
    ).status,
  ).toBe(201);
  const undo = await configure('validating', 'by-service', [
    {
      name: 'svc.test.example.com',
      path: '/by-service',
      clientConfig: {
        service: { namespace: 'hooked', name: 'hooks', path: '/by-service' },
        caBundle: Buffer.from(hookCa).toString('base64'),
      },
    },
  ]);
  expect((await cm('svc1')).status).toBe(201);
  expect(calls.map((c) => c.path)).toEqual(['/by-service']);
  await undo();
});

it('sends subresource requests (scale, status) and deletes to webhooks that ask for them', async () => {
  const undo = await configure('validating', 'subresources', [
    {
      name: 'sub.test.example.com',
      path: '/sub',
      rules: [
        {
          operations: ['UPDATE', 'DELETE'],
          apiGroups: ['apps'],
          apiVersions: ['v1'],
          resources: ['deployments/scale', 'deployments/status', 'deployments'],
        },
      ],
    },
  ]);
  const deployment = {
    metadata: { name: 'web' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    },
  };
  expect((await s.request('POST', '/apis/apps/v1/namespaces/hooked/deployments', { body: deployment })).status).toBe(
    201,
  );
  const scale = await s.request('PATCH', '/apis/apps/v1/namespaces/hooked/deployments/web/scale', {
    body: { spec: { replicas: 3 } },
    headers: { 'content-type': 'application/merge-patch+json' },
  });
  expect(scale.status).toBe(200);
  const status = await s.request('PATCH', '/apis/apps/v1/namespaces/hooked/deployments/web/status', {
    body: { status: { observedGeneration: 1 } },
    headers: { 'content-type': 'application/merge-patch+json' },
  });
  expect(status.status).toBe(200);
  expect((await s.request('DELETE', '/apis/apps/v1/namespaces/hooked/deployments/web')).status).toBe(200);
  const seen = calls.map((c) => {
    const r = c.review.request as Review['request'] & {
      subResource?: string;
      oldObject?: unknown;
      kind: { kind: string };
    };
    return [r.operation, r.subResource ?? '', r.kind.kind, r.name, r.oldObject !== undefined];
  });
  expect(seen).toEqual([
    ['UPDATE', 'scale', 'Scale', 'web', true],
    ['UPDATE', 'status', 'Deployment', 'web', true],
    ['DELETE', '', 'Deployment', 'web', true],
  ]);
  await undo();
});

/** Creates a config map; resolves the status and the Warning headers (each one, decoded as the UTF-8 sent). */
function createWithWarnings(
  name: string,
  labels: Record<string, string> = {},
  query = '',
): Promise<{ status: number; warnings: string[] }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${s.url}/api/v1/namespaces/hooked/configmaps${query}`,
      { method: 'POST', ca: s.ca, headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            warnings: (res.headersDistinct.warning ?? []).map((w) => Buffer.from(w, 'latin1').toString('utf8')),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ metadata: { name, labels } }));
  });
}

it('returns the warnings of mutating and validating webhooks as Warning headers, dry-run too', async () => {
  behaviours.set('/warn-m', (r) =>
    allow(r, {
      warnings: ['from the mutating webhook', 'shared "quoted" warning', 'naïve ☃\nnewline'],
      ...patch([{ op: 'add', path: '/data', value: { mutated: 'yes' } }]),
    }),
  );
  behaviours.set('/warn-v', (r) =>
    r.request.object?.metadata?.labels?.deny === 'true'
      ? {
          apiVersion: r.apiVersion,
          kind: 'AdmissionReview',
          response: { uid: r.request.uid, allowed: false, warnings: ['refused, and says why'] },
        }
      : allow(r, { warnings: ['from the validating webhook', 'shared "quoted" warning', ''] }),
  );
  const undoM = await configure('mutating', 'warn-m', [{ name: 'warn-m.test.example.com', path: '/warn-m' }]);
  const undoV = await configure('validating', 'warn-v', [{ name: 'warn-v.test.example.com', path: '/warn-v' }]);
  try {
    // Each distinct text once, in the order the webhooks ran; quoted and escaped as Kubernetes does.
    const expected = [
      '299 - "from the mutating webhook"',
      '299 - "shared \\"quoted\\" warning"',
      '299 - "naïve ☃\\nnewline"',
      '299 - "from the validating webhook"',
    ];
    expect(await createWithWarnings('warned')).toEqual({ status: 201, warnings: expected });
    expect(await createWithWarnings('warned-dry', {}, '?dryRun=All')).toEqual({ status: 201, warnings: expected });
    expect((await s.request('GET', '/api/v1/namespaces/hooked/configmaps/warned-dry')).status).toBe(404);
    // A refusal carries its warnings too.
    expect(await createWithWarnings('refused', { deny: 'true' })).toEqual({
      status: 403,
      warnings: [...expected.slice(0, 3), '299 - "refused, and says why"'],
    });
  } finally {
    await undoM();
    await undoV();
  }
  // No webhook, no warning.
  expect(await createWithWarnings('quiet')).toEqual({ status: 201, warnings: [] });
});
