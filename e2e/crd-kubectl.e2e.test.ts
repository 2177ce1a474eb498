/**
 * Custom resources through Debian's kubectl 1.20, against an in-process API server: apply a CRD with a structural
 * schema and printer columns; create, get (the columns show), explain, scale, patch and delete custom objects; bad
 * objects refused with the schema's messages; delete the CRD and its objects go.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startTestServer, type TestServer } from '@platform/apiserver';

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
