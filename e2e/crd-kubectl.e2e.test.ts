/**
 * Custom resources through Debian's kubectl 1.20, against an in-process API server: apply a CRD with a structural
 * schema and printer columns; create, get (the columns show), explain, scale, patch and delete custom objects; bad
 * objects refused with the schema's messages; delete the CRD and its objects go. Then a CRD of two versions whose
 * schemas differ, converted by an HTTPS conversion webhook the test runs: objects applied in one version read in
 * the other, the webhook's absence a 500 kubectl shows, and the CRD's deletion taking its objects.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startTestServer, type TestServer } from '@platform/apiserver';
import { generateSelfSignedCertKey } from '@platform/common';

import { ensureKubectl, writeKubeconfig, type KubectlResult } from './support/kubectl';

let server: TestServer;
let dir: string;
let kubeconfig: string;

const CRD = `apiVersion: apiextensions.platform/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: A CronTab runs a command on a schedule.
        properties:
          spec:
            type: object
            description: What to run and when.
            properties:
              cronSpec:
                type: string
                description: The schedule, in cron format.
                pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'
              image:
                type: string
              replicas:
                type: integer
                minimum: 0
                default: 1
            required: [cronSpec]
          status:
            type: object
            properties:
              replicas:
                type: integer
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - name: Spec
      type: string
      jsonPath: .spec.cronSpec
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
`;

const TAB = (name: string, cron: string): string => `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: ${name}
spec:
  cronSpec: "${cron}"
  image: my-cron-image
`;

beforeAll(async () => {
  ensureKubectl();
  server = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), 'crd-kubectl-'));
  kubeconfig = writeKubeconfig(dir, server);
}, 180_000);

afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs kubectl without blocking this process's event loop (the server runs in it). */
function k(...args: string[]): Promise<KubectlResult> {
  return new Promise((resolve) => {
    execFile(
      ensureKubectl(),
      ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args],
      { timeout: 60_000 },
      (err, stdout, stderr) => {
        const status = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ status, stdout, stderr });
      },
    );
  });
}

function ok(r: KubectlResult): string {
  if (r.status !== 0) throw new Error(`kubectl failed (${String(r.status)}): ${r.stderr}`);
  return r.stdout;
}

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

/** Retries a kubectl run (up to 30 s) until `done` holds for it. */
async function until(args: string[], done: (r: KubectlResult) => boolean): Promise<KubectlResult> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await k(...args);
    if (done(r)) return r;
    if (Date.now() > deadline) throw new Error(`kubectl ${args.join(' ')}: ${r.status} ${r.stdout} ${r.stderr}`);
    await new Promise((res) => setTimeout(res, 250));
  }
}

it('applies a CRD, which becomes established', async () => {
  ok(await k('apply', '-f', file('crd.yaml', CRD)));
  ok(await k('wait', '--for=condition=Established', '--timeout=30s', 'crd/crontabs.stable.example.com'));
  const crds = ok(await k('get', 'crd'));
  expect(crds).toMatch(/^NAME\s+CREATED AT/);
  expect(crds).toContain('crontabs.stable.example.com');
}, 120_000);

it('creates custom objects and prints their columns', async () => {
  await until(['api-resources', '--api-group=stable.example.com'], (r) => r.stdout.includes('crontabs'));
  ok(await k('apply', '-f', file('a.yaml', TAB('tab-a', '*/5 * * * *'))));
  ok(await k('create', '-f', file('b.yaml', TAB('tab-b', '0 1 * * *'))));
  const out = ok(await k('get', 'crontabs'));
  expect(out).toMatch(/^NAME\s+SPEC\s+REPLICAS\s+AGE/);
  expect(out).toMatch(/tab-a\s+\*\/5 \* \* \* \*\s+1\s+\d+s/);
  const short = ok(await k('get', 'ct', 'tab-b', '-o', 'jsonpath={.spec.replicas}'));
  expect(short).toBe('1');
}, 120_000);

it('explains the schema', async () => {
  const r = await until(['explain', 'crontab.spec'], (x) => x.status === 0);
  expect(r.stdout).toContain('cronSpec');
  expect(r.stdout).toContain('The schedule, in cron format.');
}, 120_000);

it('refuses bad objects with the schema messages', async () => {
  const r = await k('apply', '--validate=false', '-f', file('bad.yaml', TAB('tab-bad', 'not a schedule')));
  expect(r.status).not.toBe(0);
  expect(r.stderr).toContain('spec.cronSpec');
  expect(r.stderr).toContain('should match');
}, 120_000);

it('scales and patches custom objects', async () => {
  ok(await k('scale', 'crontab/tab-a', '--replicas=3'));
  expect(ok(await k('get', 'crontab', 'tab-a', '-o', 'jsonpath={.spec.replicas}'))).toBe('3');
  ok(await k('patch', 'crontab', 'tab-a', '--type=merge', '-p', '{"spec":{"image":"other"}}'));
  expect(ok(await k('get', 'crontab', 'tab-a', '-o', 'jsonpath={.spec.image}'))).toBe('other');
  const smp = await k('patch', 'crontab', 'tab-a', '--type=strategic', '-p', '{"spec":{"image":"x"}}');
  expect(smp.status).not.toBe(0);
  expect(smp.stderr).toContain('UnsupportedMediaType');
}, 120_000);

it('deletes custom objects, then the CRD with its remaining objects', async () => {
  ok(await k('delete', 'crontab', 'tab-b'));
  expect(ok(await k('get', 'crontabs', '-o', 'name'))).toBe('crontab.stable.example.com/tab-a\n');
  ok(await k('delete', '-f', join(dir, 'crd.yaml'), '--timeout=30s'));
  await until(['get', 'crd', 'crontabs.stable.example.com'], (r) => r.status !== 0 && r.stderr.includes('NotFound'));
  const r = await k('get', 'crontabs.stable.example.com');
  expect(r.status).not.toBe(0);
}, 120_000);

describe('a CRD of two versions with a conversion webhook', () => {
  const GROUP = 'conversion.example.com';
  let hook: Server;
  let hookUrl: string;
  let hookCa: string;
  const reviews: { apiVersion?: string; kind?: string; request?: { desiredAPIVersion?: string } }[] = [];

  type Target = { apiVersion: string; spec?: Record<string, unknown> };

  /** v1 has spec.host and spec.port, v2 spec.endpoint ("host:port"): the webhook converts between them. */
  function convert(o: Target, to: string): Target {
    const spec = { ...(o.spec ?? {}) };
    if (to === `${GROUP}/v2` && 'host' in spec) {
      spec.endpoint = `${String(spec.host)}:${String(spec.port)}`;
      delete spec.host;
      delete spec.port;
    } else if (to === `${GROUP}/v1` && typeof spec.endpoint === 'string') {
      const colon = spec.endpoint.lastIndexOf(':');
      spec.host = spec.endpoint.slice(0, colon);
      spec.port = Number(spec.endpoint.slice(colon + 1));
      delete spec.endpoint;
    }
    return { ...o, apiVersion: to, spec };
  }

  const crd = (): string => `apiVersion: apiextensions.platform/v1
kind: CustomResourceDefinition
metadata:
  name: targets.${GROUP}
spec:
  group: ${GROUP}
  scope: Namespaced
  names: {plural: targets, singular: target, kind: Target}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              host: {type: string}
              port: {type: integer}
  - name: v2
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              endpoint: {type: string, pattern: '^[^:]+:[0-9]+$'}
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig:
        url: ${hookUrl}/convert
        caBundle: ${Buffer.from(hookCa).toString('base64')}
`;

  beforeAll(async () => {
    const serving = await generateSelfSignedCertKey({ host: '127.0.0.1', alternateIPs: ['127.0.0.1'] });
    hookCa = serving.certPem;
    hook = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          apiVersion: string;
          request: { uid: string; desiredAPIVersion: string; objects: Target[] };
        };
        reviews.push(review);
        const { uid, desiredAPIVersion, objects } = review.request;
        const response = {
          uid,
          result: { status: 'Success' },
          convertedObjects: objects.map((o) => convert(o, desiredAPIVersion)),
        };
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'ConversionReview', response }));
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    hookUrl = `https://127.0.0.1:${(hook.address() as AddressInfo).port}`;
  }, 60_000);

  afterAll(async () => {
    if (!hook?.listening) return;
    hook.closeAllConnections();
    await new Promise((r) => hook.close(r));
  });

  /** kubectl get of one object (or all, without a name) in a version, parsed. */
  async function getJson(
    version: string,
    name?: string,
  ): Promise<{ apiVersion: string; spec?: unknown; items?: Target[] }> {
    return JSON.parse(ok(await k('get', `targets.${version}.${GROUP}`, ...(name ? [name] : []), '-o', 'json'))) as {
      apiVersion: string;
      spec?: unknown;
      items?: Target[];
    };
  }

  it('applies the CRD, which becomes established and served', async () => {
    ok(await k('apply', '-f', file('targets-crd.yaml', crd())));
    ok(await k('wait', '--for=condition=Established', '--timeout=30s', `crd/targets.${GROUP}`));
    await until(['api-resources', `--api-group=${GROUP}`], (r) => r.stdout.includes('targets'));
  }, 120_000);

  it('applies an object in v1 and gets it in v2, converted by the webhook (ConversionReview v1)', async () => {
    const v1 = `apiVersion: ${GROUP}/v1\nkind: Target\nmetadata:\n  name: db\nspec:\n  host: db.local\n  port: 5432\n`;
    ok(await k('apply', '-f', file('db.yaml', v1)));
    const got = await getJson('v2', 'db');
    expect(got.apiVersion).toBe(`${GROUP}/v2`);
    expect(got.spec).toEqual({ endpoint: 'db.local:5432' });
    const review = reviews.find((r) => r.request?.desiredAPIVersion === `${GROUP}/v2`);
    expect(review).toMatchObject({ apiVersion: 'apiextensions.platform/v1', kind: 'ConversionReview' });
  }, 120_000);

  it('applies an object in v2 and gets it in v1, and lists both in either version', async () => {
    const v2 = `apiVersion: ${GROUP}/v2\nkind: Target\nmetadata:\n  name: cache\nspec:\n  endpoint: cache.local:6379\n`;
    ok(await k('apply', '-f', file('cache.yaml', v2)));
    const got = await getJson('v1', 'cache');
    expect(got.apiVersion).toBe(`${GROUP}/v1`);
    expect(got.spec).toEqual({ host: 'cache.local', port: 6379 });
    const v2list = await getJson('v2');
    expect(v2list.items?.map((o) => [o.apiVersion, o.spec])).toEqual([
      [`${GROUP}/v2`, { endpoint: 'cache.local:6379' }],
      [`${GROUP}/v2`, { endpoint: 'db.local:5432' }],
    ]);
    const v1list = await getJson('v1');
    expect(v1list.items?.map((o) => o.spec)).toEqual([
      { host: 'cache.local', port: 6379 },
      { host: 'db.local', port: 5432 },
    ]);
  }, 120_000);

  it('with the webhook down, kubectl shows the 500 naming the conversion; the storage version still reads', async () => {
    hook.closeAllConnections();
    await new Promise((r) => hook.close(r));
    const r = await k('get', `targets.v2.${GROUP}`, 'db');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('Error from server (InternalError)');
    expect(r.stderr).toContain(`conversion webhook for ${GROUP}/v2, Kind=Target failed`);
    expect(ok(await k('get', `targets.v1.${GROUP}`, 'db', '-o', 'jsonpath={.spec.host}'))).toBe('db.local');
  }, 120_000);

  it('deleting the CRD deletes its objects', async () => {
    ok(await k('delete', '-f', join(dir, 'targets-crd.yaml'), '--timeout=30s'));
    await until(['get', 'crd', `targets.${GROUP}`], (r) => r.status !== 0 && r.stderr.includes('NotFound'));
    // The same CRD again serves the same keys: nothing of the old objects is left there.
    ok(await k('apply', '-f', join(dir, 'targets-crd.yaml')));
    ok(await k('wait', '--for=condition=Established', '--timeout=30s', `crd/targets.${GROUP}`));
    const r = await until(['get', `targets.v1.${GROUP}`, '-o', 'name'], (x) => x.status === 0);
    expect(r.stdout).toBe('');
  }, 120_000);
});
