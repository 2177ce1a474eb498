/**
 * Throwaway etcd members for tests and benchmarks, on 127.0.0.1 with free ports and temporary data directories.
 *
 * Uses `etcd` from PATH (or /usr/bin/etcd); when it is missing and we run as root, installs Debian's `etcd-server`
 * with apt-get first. `startEtcd` waits until every member reports healthy. `stop()` kills the members and removes
 * their directories; members still running when the process exits are killed by an exit hook, so a failing test
 * never leaves an etcd behind.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** TLS material (file paths) for members serving clients over mutual TLS. */
export interface EtcdTlsFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
  /** A client certificate signed by the CA, used for the health probe. */
  clientCertFile: string;
  clientKeyFile: string;
}

/** Options of `startEtcd`. */
export interface StartEtcdOptions {
  /** Number of members (1 or 3 typically). Default 1. */
  members?: number;
  /** Serve clients over HTTPS with --client-cert-auth. */
  tls?: EtcdTlsFiles;
  /** Server-side watch progress notifications (bookmarks); default 500ms for tests. '' to leave etcd's default. */
  progressNotifyInterval?: string;
  /** Raft timing for fast failover in tests; `defaults` runs etcd with its own defaults (benchmarks). */
  timing?: 'fast' | 'defaults';
  /** Time to wait for health, ms. Default 30000. */
  startTimeoutMs?: number;
}

/** One running member. */
export interface EtcdMember {
  readonly name: string;
  readonly clientUrl: string;
  /** Its peer URL: the member list names it, so a test can tell its member from another etcd on the port. */
  readonly peerUrl: string;
  readonly dataDir: string;
  /** SIGKILLs the member (the data dir is kept for `stop()` to remove). */
  kill(): Promise<void>;
  /** Starts a killed member again on its data directory and ports; resolves once it is running (not yet healthy). */
  restart(): Promise<void>;
  /** SIGSTOPs the member: it keeps its connections open but answers nothing (a hung member, not a dead one). */
  pause(): void;
  /** SIGCONTs a paused member. */
  resume(): void;
  readonly isRunning: boolean;
}

/** A running throwaway cluster. */
export interface EtcdCluster {
  readonly endpoints: string[];
  readonly members: EtcdMember[];
  /** Kills every member and removes the data directories. Idempotent. */
  stop(): Promise<void>;
  /** The member the running members report as their leader (waits up to `timeoutMs` for one). */
  leader(timeoutMs?: number): Promise<EtcdMember>;
}

/** What a member says of itself and its leader (the gRPC gateway's maintenance status; plain HTTP only). */
async function memberStatus(url: string): Promise<{ id: string; leader: string } | undefined> {
  return new Promise((resolve) => {
    const req = httpRequest(`${url}/v3/maintenance/status`, { method: 'POST', timeout: 1000 }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        try {
          const j = JSON.parse(body) as { header?: { member_id?: string }; leader?: string };
          resolve(j.header?.member_id && j.leader ? { id: j.header.member_id, leader: j.leader } : undefined);
        } catch {
          resolve(undefined);
        }
      });
    });
    req.on('error', () => resolve(undefined));
    req.on('timeout', () => req.destroy());
    req.end('{}');
  });
}

const running = new Set<ChildProcess>();
const dataRoots = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A test that fails (or a Jest worker that is torn down) before stop() still leaves nothing behind.
  process.on('exit', () => {
    for (const p of running) p.kill('SIGKILL');
    for (const d of dataRoots) rmSync(d, { recursive: true, force: true });
  });
}

/** The etcd binary, installing Debian's etcd-server when missing and root. Throws with instructions otherwise. */
export function ensureEtcd(): string {
  const find = (): string | undefined => {
    try {
      return execFileSync('sh', ['-c', 'command -v etcd'], { encoding: 'utf8' }).trim() || undefined;
    } catch {
      return existsSync('/usr/bin/etcd') ? '/usr/bin/etcd' : undefined;
    }
  };
  const found = find();
  if (found) return found;
  if (process.getuid?.() !== 0) {
    throw new Error('etcd is not installed and we are not root: install it (apt-get install etcd-server) and retry');
  }
  execFileSync('apt-get', ['update'], { stdio: 'ignore', timeout: 300000 });
  execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'etcd-server'], {
    stdio: 'ignore',
    timeout: 300000,
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  const installed = find();
  if (!installed) throw new Error('apt-get installed etcd-server but no etcd binary was found');
  return installed;
}

/** A free TCP port on 127.0.0.1 (bound and released; good enough for tests). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** A request to a member's HTTP API (a POST when `body` is given): its status and body, undefined on failure. */
async function ask(
  url: string,
  path: string,
  tls: EtcdTlsFiles | undefined,
  body?: string,
): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    const req = (tls ? httpsRequest : httpRequest)(
      `${url}${path}`,
      {
        method: body === undefined ? 'GET' : 'POST',
        timeout: 1000,
        ...(tls
          ? {
              ca: readFileSync(tls.caFile),
              cert: readFileSync(tls.clientCertFile),
              key: readFileSync(tls.clientKeyFile),
            }
          : {}),
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', () => resolve(undefined));
    req.on('timeout', () => req.destroy());
    req.end(body);
  });
}

async function healthy(url: string, tls: EtcdTlsFiles | undefined): Promise<boolean> {
  const res = await ask(url, '/health', tls);
  return res?.status === 200 && res.body.includes('true');
}

/**
 * Waits (up to 5 s) until every thread of `pid` is stopped. SIGSTOP stops a process's threads one by one, and a
 * thread still running a moment after `kill` returns can answer one more request: a test of a hung member would then
 * see an answer.
 */
function waitUntilStopped(pid: number): void {
  const until = Date.now() + 5000;
  while (Date.now() < until) {
    let stopped = true;
    try {
      for (const task of readdirSync(`/proc/${pid}/task`)) {
        const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
        const state = stat[stat.lastIndexOf(')') + 2];
        if (state !== 'T' && state !== 't') {
          stopped = false;
          break;
        }
      }
    } catch {
      return; // gone
    }
    if (stopped) return;
  }
}

/**
 * True when the etcd answering at `url` is the member with `peerUrl`: a free port handed to two tests at once lets
 * another test's etcd take ours, and then its /health would answer for a member that exited on "address in use".
 */
async function answersAs(url: string, peerUrl: string, tls: EtcdTlsFiles | undefined): Promise<boolean> {
  const res = await ask(url, '/v3/cluster/member/list', tls, '{}');
  try {
    const j = JSON.parse(res?.body ?? '') as { members?: { peerURLs?: string[]; clientURLs?: string[] }[] };
    return (j.members ?? []).some((m) => m.peerURLs?.includes(peerUrl) && m.clientURLs?.includes(url));
  } catch {
    return false;
  }
}

/**
 * Starts a throwaway etcd cluster and waits until every member is healthy and answers on its own ports. A member that
 * exits during start (a port taken by another test between `freePort` and etcd's bind) is retried on new ports.
 */
export async function startEtcd(options: StartEtcdOptions = {}): Promise<EtcdCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEtcdOnce(options);
    } catch (e) {
      if (attempt >= 3 || !/exited during start/.test((e as Error).message)) throw e;
    }
  }
}

async function startEtcdOnce(options: StartEtcdOptions): Promise<EtcdCluster> {
  const bin = ensureEtcd();
  installExitHook();
  const n = options.members ?? 1;
  const scheme = options.tls ? 'https' : 'http';
  const root = mkdtempSync(join(tmpdir(), 'etcd-test-'));
  dataRoots.add(root);
  const ports: { client: number; peer: number }[] = [];
  for (let i = 0; i < n; i++) ports.push({ client: await freePort(), peer: await freePort() });
  const initialCluster = ports.map((p, i) => `m${i}=http://127.0.0.1:${p.peer}`).join(',');
  const logs: string[] = [];
  const members = ports.map((p, i) => {
    const name = `m${i}`;
    const dataDir = join(root, name);
    const clientUrl = `${scheme}://127.0.0.1:${p.client}`;
    const args = [
      `--name=${name}`,
      `--data-dir=${dataDir}`,
      `--listen-client-urls=${clientUrl}`,
      `--advertise-client-urls=${clientUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${p.peer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${p.peer}`,
      `--initial-cluster=${initialCluster}`,
      '--initial-cluster-state=new',
      `--initial-cluster-token=${root}`,
      '--logger=zap',
      '--log-level=error',
    ];
    if ((options.timing ?? 'fast') === 'fast') args.push('--heartbeat-interval=50', '--election-timeout=500');
    const progress = options.progressNotifyInterval ?? '500ms';
    if (progress !== '') args.push(`--experimental-watch-progress-notify-interval=${progress}`);
    if (options.tls) {
      args.push(
        '--client-cert-auth',
        `--trusted-ca-file=${options.tls.caFile}`,
        `--cert-file=${options.tls.certFile}`,
        `--key-file=${options.tls.keyFile}`,
      );
    }
    let proc!: ChildProcess;
    let alive = false;
    let exited!: Promise<void>;
    const launch = (): void => {
      const p = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
      proc = p;
      p.stderr?.on('data', (d: Buffer) => {
        logs.push(d.toString());
        if (logs.length > 200) logs.shift();
      });
      running.add(p);
      alive = true;
      exited = new Promise<void>((res) => p.once('exit', () => res()));
      void exited.then(() => {
        alive = false;
        running.delete(p);
      });
    };
    launch();
    const member: EtcdMember = {
      name,
      clientUrl,
      peerUrl: `http://127.0.0.1:${p.peer}`,
      dataDir,
      get isRunning() {
        return alive;
      },
      async kill() {
        if (!alive) return;
        proc.kill('SIGCONT');
        proc.kill('SIGKILL');
        await exited;
      },
      async restart() {
        if (alive) throw new Error(`etcd member ${name} is running`);
        launch();
        await new Promise((r) => setTimeout(r, 50));
      },
      pause() {
        if (!alive) return;
        proc.kill('SIGSTOP');
        waitUntilStopped(proc.pid!);
      },
      resume() {
        if (alive) proc.kill('SIGCONT');
      },
    };
    return member;
  });
  const cluster: EtcdCluster = {
    endpoints: members.map((m) => m.clientUrl),
    members,
    async stop() {
      await Promise.all(members.map((m) => m.kill()));
      rmSync(root, { recursive: true, force: true });
      dataRoots.delete(root);
    },
    async leader(timeoutMs = 30000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const ids = new Map<string, EtcdMember>();
        let leaderId: string | undefined;
        for (const m of members) {
          if (!m.isRunning) continue;
          const st = await memberStatus(m.clientUrl);
          if (!st) continue;
          ids.set(st.id, m);
          leaderId ??= st.leader;
        }
        const found = leaderId === undefined ? undefined : ids.get(leaderId);
        if (found) return found;
        if (Date.now() > deadline) throw new Error('no etcd leader in time');
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
  const deadline = Date.now() + (options.startTimeoutMs ?? 30000);
  try {
    for (const m of members) {
      while (!(await healthy(m.clientUrl, options.tls)) || !(await answersAs(m.clientUrl, m.peerUrl, options.tls))) {
        if (!m.isRunning) throw new Error(`etcd member ${m.name} exited during start:\n${logs.join('')}`);
        if (Date.now() > deadline) throw new Error(`etcd member ${m.name} not healthy in time:\n${logs.join('')}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  } catch (e) {
    await cluster.stop();
    throw e;
  }
  return cluster;
}

/**
 * Generates a CA, a server certificate for 127.0.0.1/localhost and a client certificate with openssl into `dir`.
 * Returns the file paths (server files as cert/key; the CA also trusts the client certificate).
 */
export function generateTls(dir: string): EtcdTlsFiles {
  const run = (args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  };
  run([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '1',
    '-subj',
    '/CN=test-ca',
  ]);
  const sign = (name: string, subj: string, ext: string): void => {
    run(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subj]);
    writeFileSync(join(dir, `${name}.ext`), ext);
    run([
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '1',
      '-extfile',
      `${name}.ext`,
    ]);
  };
  sign(
    'server',
    '/CN=etcd-server',
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n',
  );
  sign('client', '/CN=apiserver', 'extendedKeyUsage=clientAuth\n');
  return {
    caFile: join(dir, 'ca.crt'),
    certFile: join(dir, 'server.crt'),
    keyFile: join(dir, 'server.key'),
    clientCertFile: join(dir, 'client.crt'),
    clientKeyFile: join(dir, 'client.key'),
  };
}
