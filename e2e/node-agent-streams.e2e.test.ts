/**
 * `kubectl logs`, `logs -f`, `exec` and `port-forward` (Debian's kubectl 1.20, which speaks SPDY/3.1 for the
 * streams) through a real API server to a node agent process on the builtin runtime. The API server reaches the agent
 * with `--agent-client-certificate`/`--agent-client-key` and checks it with `--agent-certificate-authority`; the
 * agent authenticates it by `--client-ca-file` and authorizes through the API server (Webhook: SubjectAccessReview).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type Node, NodeKind, type Pod, PodKind } from '@platform/api';
import { freePort, startTestServer, type TestServer } from '@platform/apiserver';
import { Clientset, loadClientConfig, RestClient } from '@platform/client';

import { ensureKubectl, type KubectlResult } from './support/kubectl';
import { type Daemon, startDaemon, waitFor } from './support/process';

jest.setTimeout(180_000);

const NODE = 'streams-node';
let dir: string;
let server: TestServer;
let agent: Daemon;
let agentPort: number;
let kubeconfig: string;
let clientset: Clientset;
const children: ChildProcess[] = [];

/** A CA, the API server's client certificate and the agent's serving certificate, made with openssl. */
function makePki(): void {
  const ssl = (args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ssl(['req', '-x509', ...key, '-keyout', 'ca.key', '-out', 'ca.crt', '-subj', '/CN=streams-test-ca', '-days', '2']);
  writeFileSync(join(dir, 'serving.ext'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  writeFileSync(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  for (const [name, subj] of [
    ['client', '/O=system:masters/CN=system:apiserver-agent-client'],
    ['serving', `/CN=${NODE}`],
  ] as const) {
    ssl(['req', ...key, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subj]);
    ssl([
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.crt`,
    ]);
  }
}

beforeAll(async () => {
  ensureKubectl();
  dir = mkdtempSync(join(tmpdir(), 'agent-streams-'));
  makePki();
  server = await startTestServer((c) => {
    c.agentClient = {
      caFile: join(dir, 'ca.crt'),
      certFile: join(dir, 'client.crt'),
      keyFile: join(dir, 'client.key'),
      preferredAddressTypes: ['InternalIP'],
      timeoutMs: 5000,
    };
  });
  writeFileSync(join(dir, 'apiserver-ca.crt'), server.ca);
  kubeconfig = join(dir, 'client.conf');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: local, cluster: {server: "${server.url}", certificate-authority: apiserver-ca.crt}}]`,
      'users: [{name: admin, user: {token: test-token}}]',
      'contexts: [{name: local, context: {cluster: local, user: admin, namespace: default}}]',
      'current-context: local',
      '',
    ].join('\n'),
  );
  clientset = new Clientset(new RestClient({ ...loadClientConfig({ clientConfig: kubeconfig }), qps: 0 }));
  agentPort = await freePort();
  agent = startDaemon('node-agent', 'platform-node-agent', [
    `--clientconfig=${kubeconfig}`,
    `--hostname-override=${NODE}`,
    '--node-ip=127.0.0.1',
    `--root-dir=${join(dir, 'root')}`,
    `--cert-dir=${join(dir, 'root', 'pki')}`,
    '--address=127.0.0.1',
    `--port=${agentPort}`,
    '--read-only-port=0',
    `--healthz-port=${await freePort()}`,
    `--tls-cert-file=${join(dir, 'serving.crt')}`,
    `--tls-private-key-file=${join(dir, 'serving.key')}`,
    `--client-ca-file=${join(dir, 'ca.crt')}`,
    '--anonymous-auth=false',
    '--authentication-token-webhook',
    '--authorization-mode=Webhook',
    '--fail-swap-on=false',
    '--api-qps=50',
    '--api-burst=100',
  ]);
  await waitFor(
    'the node to be Ready',
    async () => {
      const n = (await clientset.resource(NodeKind).get(NODE)) as Node;
      return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
    },
    90_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n${agent.output()}`);
  });
}, 180_000);

afterAll(async () => {
  if (process.env.AGENT_LOG) process.stderr.write(agent?.output() ?? '');
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await agent?.stop();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs kubectl to its end without blocking this process (the API server runs in it). */
function k(args: string[], input?: string): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(ensureKubectl(), ['--kubeconfig', kubeconfig, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

function ok(r: KubectlResult): string {
  if (r.status !== 0) throw new Error(`kubectl failed (${String(r.status)}): ${r.stderr}`);
  return r.stdout;
}

async function runPod(name: string, command: string[], restartPolicy = 'Always'): Promise<void> {
  await clientset.resource(PodKind, 'default').create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      nodeName: NODE,
      hostNetwork: true,
      restartPolicy,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: 'busybox', command }],
    },
  } as unknown as Pod);
  await waitFor(
    `pod ${name} to run`,
    async () => {
      const p = (await clientset.resource(PodKind, 'default').get(name)) as Pod;
      return p.status?.containerStatuses?.[0]?.state?.running !== undefined || p.status?.phase === 'Succeeded';
    },
    60_000,
  );
}

/** Runs kubectl in the background, collecting its output. */
function background(args: string[]): { child: ChildProcess; out: () => string; exited: Promise<number | null> } {
  const child = spawn(ensureKubectl(), ['--kubeconfig', kubeconfig, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, out: () => out, exited };
}

test('kubectl logs reads a container log through the API server', async () => {
  await runPod('printer', ['sh', '-c', 'echo first; echo second; exec sleep 3600']);
  await waitFor('both lines', async () => ok(await k(['logs', 'printer'])) === 'first\nsecond\n', 30_000);
  expect(ok(await k(['logs', 'printer', '--tail=1']))).toBe('second\n');
  expect(ok(await k(['logs', 'printer', '-c', 'main', '--timestamps']))).toMatch(/^\d{4}-\d\d-\d\dT\S+ first\n/);
  const wrong = await k(['logs', 'printer', '-c', 'nope']);
  expect(wrong.status).not.toBe(0);
  expect(wrong.stderr).toContain('container nope is not valid for pod printer');
});

test('kubectl logs -f ends when the container exits, and when it is cancelled', async () => {
  await runPod('ticker', ['sh', '-c', 'for i in 1 2 3 4 5 6; do echo tick$i; sleep 0.5; done'], 'Never');
  const f = background(['logs', '-f', 'ticker']);
  expect(await f.exited).toBe(0);
  expect(f.out()).toBe('tick1\ntick2\ntick3\ntick4\ntick5\ntick6\n');

  const g = background(['logs', '-f', 'printer']);
  await waitFor('the followed log', async () => g.out().includes('second'), 30_000);
  g.child.kill('SIGINT');
  await g.exited;
});

test('kubectl exec runs a command in the container, with its exit code and stdin', async () => {
  expect(ok(await k(['exec', 'printer', '--', 'echo', 'hi']))).toBe('hi\n');
  expect(await k(['exec', 'printer', '--', 'sh', '-c', 'echo oops >&2; exit 3'])).toMatchObject({
    status: 3,
    stderr: expect.stringContaining('oops') as unknown as string,
  });
  expect(ok(await k(['exec', '-i', 'printer', '--', 'cat'], 'from stdin\n'))).toBe('from stdin\n');
});

test('kubectl port-forward reaches a port the pod listens on at 127.0.0.1', async () => {
  const podPort = await freePort();
  const script = `require('net').createServer((s) => s.end('pong')).listen(${podPort}, '127.0.0.1')`;
  await runPod('listener', [process.execPath, '-e', script]);
  const localPort = await freePort();
  const pf = background(['port-forward', 'pod/listener', `${localPort}:${podPort}`]);
  await waitFor('port-forward to listen', async () => pf.out().includes('Forwarding from'), 30_000);
  const read = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const s = connect(localPort, '127.0.0.1');
      let text = '';
      s.on('data', (b: Buffer) => (text += b.toString()));
      s.on('end', () => resolve(text));
      s.on('error', reject);
    });
  // The pod may still be binding its port: retry until it answers.
  await waitFor('an answer through the forwarded port', async () => (await read()) === 'pong', 30_000);
  expect(await read()).toBe('pong');
  pf.child.kill('SIGINT');
  await pf.exited;
});

test('the agent refuses requests without a client certificate', async () => {
  const status = await new Promise<number>((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port: agentPort, path: '/pods', rejectUnauthorized: false, agent: false },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end();
  });
  expect(status).toBe(401);
});
