/**
 * Conversion of custom objects between CRD versions against a real API server: `None` (apiVersion rewritten) and
 * `Webhook` (a ConversionReview to an HTTPS webhook given by URL and CA bundle, in v1 or v1beta1), and a failing
 * webhook answering 500 with its message. Admission (a validating webhook, ResourceQuota) applies to custom objects
 * as to built-in ones.
 */
import { createServer, type Server } from 'node:https';
import { type AddressInfo } from 'node:net';

import { generateSelfSignedCertKey } from '@platform/common';

import { DEFAULT_ADMISSION_SETTINGS } from '../admission/server-admission';
import { startTestServer, type TestServer } from '../testing/test-server';

let server: TestServer;
let hook: Server;
let hookUrl: string;
let hookCa: string;
const reviews: { apiVersion: string; request: { desiredAPIVersion: string; objects: unknown[] } }[] = [];

const GROUP = 'conv.example.com';

type Obj = { apiVersion: string; spec?: Record<string, unknown>; metadata?: Record<string, unknown> };

/** v1 has spec.color, v2 spec.colour: the webhook renames the field both ways. */
function convert(o: Obj, to: string): Obj {
  const spec = { ...(o.spec ?? {}) };
  if (to.endsWith('/v2') && 'color' in spec) {
    spec.colour = spec.color;
    delete spec.color;
  } else if (to.endsWith('/v1') && 'colour' in spec) {
    spec.color = spec.colour;
    delete spec.colour;
  }
  return { ...o, apiVersion: to, spec };
}

function crd(plural: string, conversion: unknown): unknown {
  const schema = {
    openAPIV3Schema: {
      type: 'object',
      properties: { spec: { type: 'object', properties: { color: { type: 'string' }, colour: { type: 'string' } } } },
    },
  };
  return {
    apiVersion: 'apiextensions.platform/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, kind: plural[0]!.toUpperCase() + plural.slice(1, -1) },
      versions: [
        { name: 'v1', served: true, storage: true, schema },
        { name: 'v2', served: true, storage: false, schema },
      ],
      conversion,
    },
  };
}

async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function createServed(plural: string, conversion: unknown): Promise<void> {
  const r = await server.request('POST', '/apis/apiextensions.platform/v1/customresourcedefinitions', {
    body: crd(plural, conversion),
  });
  expect(r.status).toBe(201);
  await until(`${plural} served`, async () => {
    const l = await server.request('GET', `/apis/${GROUP}/v2/namespaces/default/${plural}`);
    return l.status === 200 ? l : undefined;
  });
}

beforeAll(async () => {
  const serving = await generateSelfSignedCertKey({ host: '127.0.0.1', alternateIPs: ['127.0.0.1'] });
  hookCa = serving.certPem;
  hook = createServer({ cert: serving.certPem, key: serving.keyPem });
  hook.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      res.setHeader('Content-Type', 'application/json');
      if (req.url === '/admit') {
        const denied = review.request.object?.metadata?.labels?.deny === 'yes';
        const response = { uid: review.request.uid, allowed: !denied, status: { message: 'no denied plains' } };
        res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response }));
        return;
      }
      reviews.push(review);
      const { uid, desiredAPIVersion, objects } = review.request;
      const response =
        req.url === '/fail'
          ? { uid, result: { status: 'Failure', message: 'colour blindness' } }
          : {
              uid,
              result: { status: 'Success' },
              convertedObjects: (objects as Obj[]).map((o) => convert(o, desiredAPIVersion)),
            };
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'ConversionReview', response }));
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  hookUrl = `https://127.0.0.1:${(hook.address() as AddressInfo).port}`;
  server = await startTestServer((c) => {
    c.admission = {
      plugins: ['NamespaceLifecycle', 'ValidatingAdmissionWebhook', 'ResourceQuota'],
      settings: DEFAULT_ADMISSION_SETTINGS,
    };
  });
}, 180_000);

afterAll(async () => {
  await server?.stop();
  await new Promise((r) => hook?.close(r));
});

const webhook = (path: string, versions: string[]): unknown => ({
  strategy: 'Webhook',
  webhook: {
    clientConfig: { url: `${hookUrl}${path}`, caBundle: Buffer.from(hookCa).toString('base64') },
    conversionReviewVersions: versions,
  },
});

it('None: the same object in every version, apiVersion rewritten', async () => {
  await createServed('plains', { strategy: 'None' });
  const base = `/apis/${GROUP}/v2/namespaces/default/plains`;
  const c = await server.request('POST', base, {
    body: { apiVersion: `${GROUP}/v2`, kind: 'Plain', metadata: { name: 'p' }, spec: { colour: 'red' } },
  });
  expect(c.status).toBe(201);
  const v1 = await server.request('GET', `/apis/${GROUP}/v1/namespaces/default/plains/p`);
  expect(v1.json).toMatchObject({ apiVersion: `${GROUP}/v1`, spec: { colour: 'red' } });
});

it('Webhook: objects are converted by the webhook (ConversionReview v1) on reads, writes, lists and watches', async () => {
  await createServed('hooks', webhook('/convert', ['v1']));
  const v2 = `/apis/${GROUP}/v2/namespaces/default/hooks`;
  const v1 = `/apis/${GROUP}/v1/namespaces/default/hooks`;
  const c = await server.request('POST', v2, {
    body: {
      apiVersion: `${GROUP}/v2`,
      kind: 'Hook',
      metadata: { name: 'h', labels: { a: 'b' } },
      spec: { colour: 'blue' },
    },
  });
  expect(c.status).toBe(201);
  expect(c.json).toMatchObject({
    apiVersion: `${GROUP}/v2`,
    spec: { colour: 'blue' },
    metadata: { labels: { a: 'b' } },
  });
  const old = await server.request('GET', `${v1}/h`);
  expect(old.json).toMatchObject({ apiVersion: `${GROUP}/v1`, spec: { color: 'blue' } });
  const list = await server.request('GET', v2);
  expect(list.json.items[0]).toMatchObject({ apiVersion: `${GROUP}/v2`, spec: { colour: 'blue' } });
  const patched = await server.request('PATCH', `${v2}/h`, {
    body: { spec: { colour: 'green' } },
    headers: { 'Content-Type': 'application/merge-patch+json' },
  });
  expect(patched.json.spec).toEqual({ colour: 'green' });
  expect((await server.request('GET', `${v1}/h`)).json.spec).toEqual({ color: 'green' });
  const review = reviews.find((r) => r.request.desiredAPIVersion === `${GROUP}/v1`);
  expect(review?.apiVersion).toBe('apiextensions.platform/v1');
  const w = await server.request('GET', `${v2}?watch=1&resourceVersion=0&timeoutSeconds=1`);
  expect(JSON.parse(w.text.trim().split('\n')[0] as string).object).toMatchObject({ spec: { colour: 'green' } });
});

it('Webhook: ConversionReview v1beta1 when the CRD asks only for it', async () => {
  await createServed('betas', webhook('/convert', ['v1beta1']));
  const c = await server.request('POST', `/apis/${GROUP}/v2/namespaces/default/betas`, {
    body: { apiVersion: `${GROUP}/v2`, kind: 'Beta', metadata: { name: 'b' }, spec: { colour: 'teal' } },
  });
  expect(c.status).toBe(201);
  expect(reviews.some((r) => r.apiVersion === 'apiextensions.platform/v1beta1')).toBe(true);
});

it("Webhook: a failing webhook is a 500 with the webhook's message", async () => {
  await createServed('fails', webhook('/fail', ['v1']));
  const r = await server.request('POST', `/apis/${GROUP}/v2/namespaces/default/fails`, {
    body: { apiVersion: `${GROUP}/v2`, kind: 'Fail', metadata: { name: 'f' }, spec: { colour: 'red' } },
  });
  expect(r.status).toBe(500);
  expect(r.json.message).toContain(`conversion webhook for ${GROUP}/v1, Kind=Fail returned failure: colour blindness`);
});

it('admission applies to custom objects: validating webhooks and object-count quotas', async () => {
  // Runs after the None test: plains are served.
  const hooks = await server.request(
    'POST',
    '/apis/admissionregistration.platform/v1/validatingwebhookconfigurations',
    {
      body: {
        apiVersion: 'admissionregistration.platform/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'plains' },
        webhooks: [
          {
            name: 'plains.conv.example.com',
            clientConfig: { url: `${hookUrl}/admit`, caBundle: Buffer.from(hookCa).toString('base64') },
            rules: [{ operations: ['CREATE'], apiGroups: [GROUP], apiVersions: ['*'], resources: ['plains'] }],
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          },
        ],
      },
    },
  );
  expect(hooks.status).toBe(201);
  const base = `/apis/${GROUP}/v1/namespaces/default/plains`;
  const denied = await until('the webhook to deny', async () => {
    const r = await server.request('POST', base, {
      body: { apiVersion: `${GROUP}/v1`, kind: 'Plain', metadata: { generateName: 'd-', labels: { deny: 'yes' } } },
    });
    return r.status === 403 ? r : undefined;
  });
  expect(denied.json.message).toContain('no denied plains');
  const q = await server.request('POST', '/api/v1/namespaces/default/resourcequotas', {
    body: {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'plains' },
      spec: { hard: { [`count/plains.${GROUP}`]: '0' } },
    },
  });
  expect(q.status).toBe(201);
  const over = await until('the quota to refuse', async () => {
    const r = await server.request('POST', base, {
      body: { apiVersion: `${GROUP}/v1`, kind: 'Plain', metadata: { generateName: 'q-' } },
    });
    return r.status === 403 ? r : undefined;
  });
  expect(over.json.message).toContain('exceeded quota: plains');
});

it('deleting a CRD deletes its objects through the storage version: a failing webhook cannot hold the deletion up', async () => {
  const CRDS = '/apis/apiextensions.platform/v1/customresourcedefinitions';
  const body = crd('orders', webhook('/convert', ['v1'])) as { spec: { versions: unknown[] } };
  body.spec.versions.reverse(); // v2, not the storage version, listed first
  expect((await server.request('POST', CRDS, { body })).status).toBe(201);
  await until('orders served', async () => {
    const l = await server.request('GET', `/apis/${GROUP}/v1/namespaces/default/orders`);
    return l.status === 200 ? l : undefined;
  });
  const o = await server.request('POST', `/apis/${GROUP}/v1/namespaces/default/orders`, {
    body: { apiVersion: `${GROUP}/v1`, kind: 'Order', metadata: { name: 'o' }, spec: { color: 'blue' } },
  });
  expect(o.status).toBe(201);
  const cur = (await server.request('GET', `${CRDS}/orders.${GROUP}`)).json;
  cur.spec.conversion = webhook('/fail', ['v1']);
  expect((await server.request('PUT', `${CRDS}/orders.${GROUP}`, { body: cur })).status).toBe(200);
  expect((await server.request('GET', `/apis/${GROUP}/v2/namespaces/default/orders/o`)).status).toBe(500);
  expect((await server.request('DELETE', `${CRDS}/orders.${GROUP}`)).status).toBe(200);
  await until('the CRD and its object gone', async () =>
    (await server.request('GET', `${CRDS}/orders.${GROUP}`)).status === 404 ? true : undefined,
  );
});
