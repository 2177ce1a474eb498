/**
 * `--runonce`: the agent process, with no API server, starts the pods of `--pod-manifest-path`, waits until each is
 * running or done, prints their phases and exits 0.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

jest.setTimeout(120_000);

const BIN = join(__dirname, '..', 'bin', 'platform-node-agent');

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'runonce-'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('--runonce runs the local pods, reports their phases and exits', async () => {
  const manifests = join(dir, 'manifests');
  mkdirSync(manifests);
  writeFileSync(
    join(manifests, 'once.yaml'),
    'apiVersion: v1\nkind: Pod\nmetadata: {name: once}\nspec:\n  restartPolicy: Never\n  containers:\n  - {name: c, image: busybox, command: [sh, -c, "echo done"]}\n',
  );
  writeFileSync(
    join(manifests, 'server.yaml'),
    'apiVersion: v1\nkind: Pod\nmetadata: {name: server}\nspec:\n  containers:\n  - {name: c, image: busybox, command: [sleep, "3600"]}\n',
  );
  const child = spawn(
    process.execPath,
    [
      BIN,
      '--runonce',
      `--pod-manifest-path=${manifests}`,
      '--hostname-override=runonce-node',
      '--node-ip=127.0.0.1',
      `--root-dir=${join(dir, 'root')}`,
      `--cert-dir=${join(dir, 'root', 'pki')}`,
      '--read-only-port=0',
      '--healthz-port=0',
      '--fail-swap-on=false',
      '--logtostderr',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 100_000);
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`exit ${String(code)}:\n${out}`);
  const phases = [...out.matchAll(/Pod status.*?pod="?([\w-]+)"?.*?phase="?(\w+)"?/g)].map((m) => `${m[1]}=${m[2]}`);
  // A pod counts once it runs (as the kubelet's --runonce): the short one may still be running or already done.
  expect(phases.sort()).toEqual([
    expect.stringMatching(/^once-runonce-node=(Running|Succeeded)$/),
    'server-runonce-node=Running',
  ]);
});
