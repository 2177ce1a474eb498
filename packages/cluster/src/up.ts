/**
 * `platform up`: a whole cluster on this machine, each daemon its own process with its own identity — on the
 * embedded store (one API server), or with `--store etcd --servers N` on an N-member etcd cluster with N API servers,
 * N controller managers and N schedulers (one of each elected leader). Prints one progress line per daemon as it
 * becomes healthy, then one summary; stops them in order on SIGINT/SIGTERM.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';

import { ensureAnonymousDiscovery } from './anonymous-discovery';
import { type Balancer, startBalancer } from './balancer';
import {
  ADMIN,
  AGENT_CLIENT,
  clusterFiles,
  CONTROLLER_MANAGER,
  ensureClusterCa,
  ensureCredentials,
  ensureFrontProxyCa,
  ensureIssued,
  FRONT_PROXY_CLIENT,
  type Identity,
  nodeIdentity,
  type PairFiles,
  SCHEDULER,
  METRICS_SERVER_USER,
  SIMULATED_NODES,
  writeCertKubeconfig,
  writeKubeconfig,
} from './pki';
import { metricsServerObjects, registerMetricsServer } from './metrics-server';
import { acquireLock, clearState, type ClusterState, releaseLock, writeState } from './state';
import { type DaemonSpec, pickPort, portFree, probe, Supervisor } from './supervisor';

/** The options of `platform up`. */
export interface UpOptions {
  dir: string;
  port: number;
  bindAddress: string;
  store: 'sqlite' | 'etcd';
  servers: number;
  simulateNodes: number;
  nodeName: string;
  containerRuntime: 'auto' | 'builtin' | 'remote';
  containerRuntimeEndpoint?: string;
  /** Daemons (as `platform status` names them) that stay down when they exit: failure drills. */
  keepDown?: string[];
  /**
   * The daemons' own ports (etcd's, the controller managers', schedulers', node agents') are picked by the OS rather
   * than their defaults: several clusters started at once on one machine (tests) would race for the same defaults.
   */
  randomPorts?: boolean;
  /** More flags for every daemon of a kind, after the launcher's own (`--controller-manager-arg=...`). */
  extraArgs?: Partial<Record<DaemonKind, string[]>>;
}

/** The kinds of daemon that `--<kind>-arg` passes flags to. */
export const DAEMON_KINDS = ['apiserver', 'controller-manager', 'scheduler', 'node-agent', 'metrics-server'] as const;
export type DaemonKind = (typeof DAEMON_KINDS)[number];

/** Where the output goes (tests capture it). */
export interface Output {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** How long one daemon may take to become healthy. */
const HEALTHY_TIMEOUT_MS = 90_000;
/** containerd's socket when it runs as the system's service. */
const DEFAULT_CONTAINERD_SOCKET = '/run/containerd/containerd.sock';

/** A DNS-1123 name for this machine's node. */
export function defaultNodeName(): string {
  const name = hostname()
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, '-')
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '');
  return name.slice(0, 63) || 'node';
}

function binOf(pkg: string, bin: string): string {
  return join(dirname(require.resolve(`@platform/${pkg}`)), '..', 'bin', bin);
}

/** The etcd binary on PATH (or Debian's), or an error saying how to get it. */
function etcdBinary(): string {
  try {
    const found = execFileSync('sh', ['-c', 'command -v etcd'], { encoding: 'utf8' }).trim();
    if (found) return found;
  } catch {
    // not on PATH
  }
  if (existsSync('/usr/bin/etcd')) return '/usr/bin/etcd';
  throw new UsageError(
    '--store etcd needs etcd: install it (Debian: apt-get install etcd-server) or use the embedded store',
  );
}

/** A problem with what the user asked for: printed as it is, exit code 1, nothing started. */
export class UsageError extends Error {}

/** The names of the daemons (other than etcd's) that `o` starts, as `platform status` shows them. */
export function daemonNames(o: UpOptions): string[] {
  const n = (base: string, i: number): string => (o.servers > 1 ? `${base}-${i + 1}` : base);
  const names: string[] = [];
  for (let i = 0; i < o.servers; i++) names.push(n('apiserver', i), n('controller-manager', i), n('scheduler', i));
  names.push('node-agent', 'metrics-server');
  if (o.simulateNodes > 0) names.push('simulated-nodes');
  return names;
}

/** The names of the etcd members that `o` starts (none on the embedded store). */
function etcdNames(o: UpOptions): string[] {
  if (o.store !== 'etcd') return [];
  return o.servers > 1 ? Array.from({ length: o.servers }, (_, i) => `etcd-${i + 1}`) : ['etcd'];
}

/** Checks the options; throws a UsageError naming the option. */
export function validateUpOptions(o: UpOptions): void {
  if (!Number.isInteger(o.servers) || o.servers < 1 || o.servers > 7)
    throw new UsageError(`--servers must be a whole number from 1 to 7, not ${String(o.servers)}`);
  if (o.servers > 1 && o.store !== 'etcd')
    throw new UsageError(`--servers ${o.servers} needs --store etcd: the embedded store is one API server's own file`);
  if (!Number.isInteger(o.simulateNodes) || o.simulateNodes < 0 || o.simulateNodes > 5000)
    throw new UsageError(`--simulate-nodes must be a whole number from 0 to 5000, not ${String(o.simulateNodes)}`);
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(o.nodeName))
    throw new UsageError(`--node-name ${JSON.stringify(o.nodeName)} is not a valid node name (a DNS-1123 subdomain)`);
  const names = [...etcdNames(o), ...daemonNames(o)];
  for (const name of o.keepDown ?? [])
    if (!names.includes(name))
      throw new UsageError(
        `--keep-down ${JSON.stringify(name)} names no daemon of this cluster; there are: ${names.join(', ')}`,
      );
  for (const [kind, flags] of Object.entries(o.extraArgs ?? {}))
    for (const flag of flags ?? [])
      if (!flag.startsWith('-'))
        throw new UsageError(
          `--${kind}-arg ${JSON.stringify(flag)} is not a flag: give it as --${kind}-arg=--name=value`,
        );
  if (o.containerRuntime === 'builtin' && o.containerRuntimeEndpoint)
    throw new UsageError('--container-runtime-endpoint needs --container-runtime remote (or auto)');
}

/** The container runtime flags of the node agent. */
function runtimeArgs(o: UpOptions): { args: string[]; label: string } {
  let endpoint = o.containerRuntimeEndpoint;
  if (!endpoint && o.containerRuntime !== 'builtin' && existsSync(DEFAULT_CONTAINERD_SOCKET))
    endpoint = `unix://${DEFAULT_CONTAINERD_SOCKET}`;
  if (o.containerRuntime === 'remote' && !endpoint)
    throw new UsageError(
      `--container-runtime remote needs --container-runtime-endpoint (no containerd socket at ${DEFAULT_CONTAINERD_SOCKET})`,
    );
  if (!endpoint) return { args: ['--container-runtime=builtin'], label: 'builtin' };
  const e = endpoint.startsWith('unix://') || endpoint.includes('://') ? endpoint : `unix://${endpoint}`;
  return {
    args: ['--container-runtime=remote', `--container-runtime-endpoint=${e}`, `--image-service-endpoint=${e}`],
    label: `remote (${e})`,
  };
}

/** Etcd member ports, kept across restarts (a member's peer URL is part of the cluster's membership). */
async function etcdPorts(
  dir: string,
  members: number,
  taken: Set<number>,
  random: boolean,
): Promise<{ client: number; peer: number }[]> {
  const file = join(dir, 'etcd', 'ports.json');
  if (existsSync(file)) {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as { client: number; peer: number }[];
    if (kept.length !== members)
      throw new UsageError(
        `${dir} holds an etcd cluster of ${kept.length} member(s): start it with --servers ${kept.length}, or use another --dir`,
      );
    for (const p of kept) {
      for (const port of [p.client, p.peer]) {
        if (!(await portFree(port, '127.0.0.1')))
          throw new UsageError(`port ${port} (etcd of ${dir}) is in use by another program`);
        taken.add(port);
      }
    }
    return kept;
  }
  const ports: { client: number; peer: number }[] = [];
  for (let i = 0; i < members; i++)
    ports.push({
      client: await pickPort(random ? 0 : 2379 + 2 * i, taken),
      peer: await pickPort(random ? 0 : 2380 + 2 * i, taken),
    });
  mkdirSync(join(dir, 'etcd'), { recursive: true });
  writeFileSync(file, `${JSON.stringify(ports)}\n`);
  return ports;
}

/**
 * Runs the cluster until SIGINT/SIGTERM (or until `stop` aborts); resolves with the exit code. `onReady` hears the
 * summary once every daemon is up.
 */
export async function up(o: UpOptions, io: Output, stop?: AbortSignal): Promise<number> {
  try {
    validateUpOptions(o);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`platform: ${err.message}`);
      return 1;
    }
    throw err;
  }
  mkdirSync(o.dir, { recursive: true });
  const f = clusterFiles(o.dir);
  const holder = acquireLock(f.lockFile, process.pid);
  if (holder !== undefined) {
    io.err(
      `platform: ${o.dir} belongs to a running cluster (launcher pid ${holder}); stop it with \`platform down --dir ${o.dir}\` or use another --dir`,
    );
    return 1;
  }
  const supervisor = new Supervisor(f.logDir, (line) => io.err(`platform: ${line}`));
  const state: ClusterState = { pid: process.pid, phase: 'starting', daemons: [] };
  let stopping = false;
  let fatal: string | undefined;
  let wake: () => void = () => {};
  const stopped = new Promise<void>((resolve) => (wake = resolve));
  const requestStop = (why?: string): void => {
    if (why && !fatal) fatal = why;
    if (stopping) return;
    stopping = true;
    supervisor.beginStop();
    wake();
  };
  const onSignal = (): void => {
    if (!stopping) io.out('\nplatform: stopping...');
    requestStop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  stop?.addEventListener('abort', onSignal, { once: true });
  supervisor.onFatal((why) => requestStop(why));

  const save = (): void => {
    state.daemons = [...supervisor.daemons.values()].map((d) => ({
      name: d.spec.name,
      pid: d.child?.pid,
      health: d.spec.health,
      log: d.logFile,
      detail: details.get(d.spec.name),
    }));
    writeState(f.stateFile, state);
  };
  const details = new Map<string, string>();
  supervisor.onChange(save);

  // From the launcher's process start: loading its own modules is part of what a user waits for.
  const started = performance.timeOrigin;
  /**
   * Starts a daemon and waits until it is healthy; false when the cluster is stopping. The progress line gives the
   * daemon's own start (process to healthy) and when, since the launch, it was healthy.
   */
  const bring = async (spec: DaemonSpec, detail: string, required: boolean): Promise<boolean> => {
    if (stopping) return false;
    details.set(spec.name, detail);
    const t0 = Date.now();
    supervisor.start(spec);
    const ok = await supervisor.waitHealthy(spec.name, HEALTHY_TIMEOUT_MS, required);
    if (stopping) return false;
    const secs = ((Date.now() - t0) / 1000).toFixed(1);
    if (ok)
      io.out(`  ✓ ${spec.name.padEnd(22)} ${detail} (${secs}s, at ${((Date.now() - started) / 1000).toFixed(1)}s)`);
    else if (required) {
      const d = supervisor.daemons.get(spec.name);
      requestStop(
        `${spec.name} ${d?.exits ? 'exited before it was healthy' : `did not become healthy within ${HEALTHY_TIMEOUT_MS / 1000}s`}; see ${f.logDir}/${spec.name}.log`,
      );
      return false;
    } else
      io.err(
        `  ✗ ${spec.name.padEnd(22)} not healthy after ${secs}s; ${spec.restart ? 'it keeps being retried' : 'restarts are off'} (platform logs ${spec.name})`,
      );
    save();
    return true;
  };

  let code = 0;
  let balancer: Balancer | undefined;
  try {
    const host = o.bindAddress === '0.0.0.0' ? '127.0.0.1' : o.bindAddress;
    const taken = new Set<number>();
    const apiPorts: number[] = [];
    for (let i = 0; i < o.servers; i++) {
      const port = o.port + i;
      if (!(await portFree(port, o.bindAddress)))
        throw new UsageError(`port ${port} on ${o.bindAddress} is in use: choose another with --port`);
      taken.add(port);
      apiPorts.push(port);
    }
    const runtime = runtimeArgs(o);
    const node = nodeIdentity(o.nodeName);
    const identities: Identity[] = [ADMIN, CONTROLLER_MANAGER, SCHEDULER, node];
    if (o.simulateNodes > 0) identities.push(SIMULATED_NODES);
    const tokens = await ensureCredentials(f, host, identities);
    const ca = await ensureClusterCa(f);
    await ensureIssued(ca, f.agentClient, { ...AGENT_CLIENT, usage: 'client' });
    // The aggregation layer's credentials: the API server's proxy client certificate (its own CA, so that no other
    // certificate may name users in headers), and the metrics server's serving and client certificates.
    const frontProxyCa = await ensureFrontProxyCa(f);
    await ensureIssued(frontProxyCa, f.frontProxyClient, { ...FRONT_PROXY_CLIENT, usage: 'client' });
    await ensureIssued(ca, f.metricsServerServing, {
      commonName: 'metrics-server',
      usage: 'server',
      dns: ['metrics-server.system.svc', 'localhost'],
      ips: ['127.0.0.1'],
    });
    await ensureIssued(ca, f.metricsServerClient, { commonName: METRICS_SERVER_USER, usage: 'client' });
    /** A daemon's serving certificate (`<pki>/<name>-serving.crt`), signed by the cluster CA, for 127.0.0.1. */
    const serving = (name: string, commonName: string, dns: string[] = []): Promise<PairFiles> =>
      ensureIssued(
        ca,
        { certFile: join(f.pkiDir, `${name}-serving.crt`), keyFile: join(f.pkiDir, `${name}-serving.key`) },
        { commonName, usage: 'server', dns: [...dns, 'localhost'], ips: ['127.0.0.1'] },
      );
    /** The node agent's serving certificate, signed by the cluster CA that the API server checks it with. */
    const agentServing = (name: string, nodeName: string): Promise<PairFiles> =>
      serving(name, `system:node:${nodeName}`, [nodeName]);
    /**
     * The controller managers' and schedulers' serving flags: a certificate of the cluster CA (ECDSA, made in a
     * millisecond), rather than the self-signed RSA pair each would generate in its --cert-dir on a first start.
     */
    const servingArgs = async (name: string): Promise<string[]> => {
      const pair = await serving(name, name);
      return [`--tls-cert-file=${pair.certFile}`, `--tls-private-key-file=${pair.keyFile}`];
    };
    const urls = apiPorts.map((p) => `https://${host}:${p}`);
    // With several API servers, the node agents (one each, unlike the controller managers and schedulers) and the
    // admin's client configuration reach them through a balancer that fails over, so that losing any one API server
    // leaves the nodes and kubectl working.
    if (o.servers > 1) balancer = await startBalancer(host, apiPorts);
    writeKubeconfig(f, balancer ? `https://127.0.0.1:${balancer.port}` : urls[0]!, tokens.get(ADMIN.name)!);

    /** The user's extra flags of a kind of daemon (`--controller-manager-arg` ...); they come last, so they win. */
    const extra = (kind: DaemonKind): string[] => o.extraArgs?.[kind] ?? [];
    /** A daemon's default port, or 0 (the OS picks one) with `randomPorts`. */
    const preferred = (port: number): number => (o.randomPorts ? 0 : port);

    /**
     * Anonymous requests reach health checks, the version and discovery; the authorizer follows the binding through a
     * watch, so wait until it has it. Not on the way of any daemon: they all authenticate.
     */
    const openDiscovery = async (): Promise<boolean> => {
      const url = `https://${host}:${o.port}`;
      try {
        await ensureAnonymousDiscovery(url, tokens.get(ADMIN.name)!, readFileSync(f.caFile, 'utf8'));
        for (let n = 0; n < 100 && !stopping && !(await probe(`${url}/api`)); n++)
          await new Promise((r) => setTimeout(r, 50));
      } catch (err) {
        io.err(`platform: could not open discovery to anonymous requests: ${String(err)}`);
      }
      return true;
    };

    /**
     * A node agent's server as a kubelet's is secured: no anonymous requests; the API server (and any client) proves
     * who it is by a certificate of the cluster CA or a token that the API server reviews, and the API server decides
     * what it may do (SubjectAccessReview on `nodes/proxy` and the like); the agent serves with a certificate of that
     * CA, which the API server checks (`--agent-certificate-authority`).
     */
    const secureAgentArgs = async (name: string, nodeName: string): Promise<string[]> => {
      const serving = await agentServing(name, nodeName);
      return [
        '--anonymous-auth=false',
        `--client-ca-file=${f.clusterCa.certFile}`,
        '--authentication-token-webhook=true',
        '--authorization-mode=Webhook',
        `--tls-cert-file=${serving.certFile}`,
        `--tls-private-key-file=${serving.keyFile}`,
      ];
    };

    /**
     * The controller managers and schedulers, one of each per API server (leader-elected among themselves), the node
     * agent of this machine and the simulated nodes' agent: each spec with what the progress line says of it.
     */
    const clientDaemons = async (): Promise<[DaemonSpec, string][]> => {
      const specs: [DaemonSpec, string][] = [];
      for (let i = 0; i < o.servers; i++) {
        const suffix = o.servers > 1 ? `-${i + 1}` : '';
        const cmConf = writeKubeconfig(f, urls[i]!, tokens.get(CONTROLLER_MANAGER.name)!, {
          ...CONTROLLER_MANAGER,
          name: `controller-manager${suffix}`,
        });
        const cmPort = await pickPort(preferred(10257 + 100 * i), taken);
        specs.push([
          {
            name: `controller-manager${suffix}`,
            rank: 2,
            bin: binOf('controller-manager', 'platform-controller-manager'),
            restart: !o.keepDown?.includes(`controller-manager${suffix}`),
            essential: false,
            health: `https://127.0.0.1:${cmPort}/healthz`,
            args: [
              `--clientconfig=${cmConf}`,
              `--authentication-clientconfig=${cmConf}`,
              `--authorization-clientconfig=${cmConf}`,
              `--secure-port=${cmPort}`,
              '--bind-address=127.0.0.1',
              `--cert-dir=${join(f.pkiDir, `controller-manager${suffix}`)}`,
              ...(await servingArgs(`controller-manager${suffix}`)),
              '--leader-elect=true',
              '--use-service-account-credentials=true',
              // Token Secrets for service accounts, signed with the key the API server verifies, with its CA.
              `--service-account-private-key-file=${f.serviceAccountKey}`,
              `--root-ca-file=${f.caFile}`,
              ...extra('controller-manager'),
            ],
          },
          `https://127.0.0.1:${cmPort}`,
        ]);
        const schedConf = writeKubeconfig(f, urls[i]!, tokens.get(SCHEDULER.name)!, {
          ...SCHEDULER,
          name: `scheduler${suffix}`,
        });
        const schedPort = await pickPort(preferred(10259 + 100 * i), taken);
        specs.push([
          {
            name: `scheduler${suffix}`,
            rank: 2,
            bin: binOf('scheduler', 'platform-scheduler'),
            restart: !o.keepDown?.includes(`scheduler${suffix}`),
            essential: false,
            health: `https://127.0.0.1:${schedPort}/healthz`,
            args: [
              `--clientconfig=${schedConf}`,
              `--authentication-clientconfig=${schedConf}`,
              `--authorization-clientconfig=${schedConf}`,
              `--secure-port=${schedPort}`,
              '--port=0',
              '--bind-address=127.0.0.1',
              `--cert-dir=${join(f.pkiDir, `scheduler${suffix}`)}`,
              ...(await servingArgs(`scheduler${suffix}`)),
              '--leader-elect=true',
              ...extra('scheduler'),
            ],
          },
          `https://127.0.0.1:${schedPort}`,
        ]);
      }
      const agents: { id: Identity; name: string; extra: string[]; detail: string }[] = [
        {
          id: node,
          name: 'node-agent',
          extra: [
            ...runtime.args,
            `--hostname-override=${o.nodeName}`,
            ...(await secureAgentArgs('node-agent', o.nodeName)),
          ],
          detail: `node ${o.nodeName}, ${runtime.label} runtime`,
        },
      ];
      if (o.simulateNodes > 0)
        agents.push({
          id: SIMULATED_NODES,
          name: 'simulated-nodes',
          extra: [`--simulate-nodes=${o.simulateNodes}`, `--hostname-override=${o.nodeName}-sim`],
          detail: `${o.simulateNodes} simulated node(s)`,
        });
      const agentServer = balancer ? `https://127.0.0.1:${balancer.port}` : urls[0]!;
      for (const a of agents) {
        const conf = writeKubeconfig(f, agentServer, tokens.get(a.id.name)!, a.id);
        const port = await pickPort(preferred(10250), taken);
        const healthzPort = await pickPort(preferred(10248), taken);
        specs.push([
          {
            name: a.name,
            rank: 2,
            bin: binOf('node-agent', 'platform-node-agent'),
            restart: !o.keepDown?.includes(a.name),
            essential: false,
            health: `http://127.0.0.1:${healthzPort}/healthz`,
            args: [
              `--clientconfig=${conf}`,
              '--node-ip=127.0.0.1',
              '--address=127.0.0.1',
              `--port=${port}`,
              '--read-only-port=0',
              '--healthz-bind-address=127.0.0.1',
              `--healthz-port=${healthzPort}`,
              `--root-dir=${join(o.dir, a.name)}`,
              `--cert-dir=${join(f.pkiDir, a.name)}`,
              '--fail-swap-on=false',
              ...a.extra,
              ...extra('node-agent'),
            ],
          },
          a.detail,
        ]);
      }
      return specs;
    };

    io.out(`platform: starting a cluster in ${o.dir}`);
    state.phase = 'starting';
    save();

    // The store.
    let storeServers = `sqlite://${f.store}`;
    if (o.store === 'etcd') {
      const etcd = etcdBinary();
      const ports = await etcdPorts(o.dir, o.servers, taken, !!o.randomPorts);
      const initial = ports.map((p, i) => `m${i}=http://127.0.0.1:${p.peer}`).join(',');
      for (const [i, p] of ports.entries()) {
        const name = etcdNames(o)[i]!;
        const spec: DaemonSpec = {
          name,
          rank: 0,
          bin: etcd,
          exec: true,
          // A member of a cluster that lost it keeps the quorum and is started again (its data directory makes it
          // rejoin as itself); the only member is the store, and its exit stops the cluster.
          restart: o.servers > 1 && !o.keepDown?.includes(name),
          essential: o.servers === 1,
          health: `http://127.0.0.1:${p.client}/health`,
          args: [
            `--name=m${i}`,
            `--data-dir=${join(o.dir, 'etcd', `m${i}`)}`,
            `--listen-client-urls=http://127.0.0.1:${p.client}`,
            `--advertise-client-urls=http://127.0.0.1:${p.client}`,
            `--listen-peer-urls=http://127.0.0.1:${p.peer}`,
            `--initial-advertise-peer-urls=http://127.0.0.1:${p.peer}`,
            `--initial-cluster=${initial}`,
            '--initial-cluster-state=new',
            '--initial-cluster-token=platform',
          ],
        };
        // Members wait for each other to form a quorum: start them all, then wait.
        details.set(spec.name, `http://127.0.0.1:${p.client}`);
        supervisor.start(spec);
      }
      save();
      for (const name of [...supervisor.daemons.keys()]) {
        const t0 = Date.now();
        if (!(await supervisor.waitHealthy(name, HEALTHY_TIMEOUT_MS))) {
          if (!stopping) requestStop(`${name} did not become healthy; see ${f.logDir}/${name}.log`);
          break;
        }
        io.out(`  ✓ ${name.padEnd(22)} ${details.get(name)} (${((Date.now() - t0) / 1000).toFixed(1)}s)`);
      }
      storeServers = ports.map((p) => `http://127.0.0.1:${p.client}`).join(',');
    }

    // The first API server and, at the same time, every controller manager, scheduler and node agent: each is its own
    // process whose start (mostly loading its modules) is on the path to ready, and each waits for and retries the
    // API on its own. The other API servers wait for the first, which bootstraps the policy (several at once would
    // race to write it).
    /**
     * Who may authenticate to the API servers and the metrics server by a certificate: clients of the cluster CA, and
     * the front proxy (the aggregation layer) with the user in its headers.
     */
    const clientCertificateArgs = [
      `--client-ca-file=${f.clusterCa.certFile}`,
      `--requestheader-client-ca-file=${f.frontProxyCa.certFile}`,
      `--requestheader-allowed-names=${FRONT_PROXY_CLIENT.commonName}`,
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    ];
    const apiName = (i: number): string => (o.servers > 1 ? `apiserver-${i + 1}` : 'apiserver');
    const apiSpec = (i: number, port: number): DaemonSpec => ({
      name: apiName(i),
      rank: 1,
      bin: binOf('apiserver', 'platform-apiserver'),
      // As systemd's Restart=always would; under --keep-down, one of several may stay down.
      restart: !o.keepDown?.includes(apiName(i)),
      essential: o.servers === 1,
      health: `https://${host}:${port}/readyz`,
      args: [
        `--store-servers=${storeServers}`,
        `--secure-port=${port}`,
        `--bind-address=${o.bindAddress}`,
        `--cert-dir=${f.pkiDir}`,
        `--token-auth-file=${f.tokenAuthFile}`,
        '--authorization-mode=Node,RBAC',
        // Client certificates of the cluster CA (the metrics server's), and the aggregation layer: extension servers
        // trust the front proxy's certificate and its user headers, and are reached at their endpoints.
        ...clientCertificateArgs,
        `--proxy-client-cert-file=${f.frontProxyClient.certFile}`,
        `--proxy-client-key-file=${f.frontProxyClient.keyFile}`,
        '--enable-aggregator-routing=true',
        `--service-account-issuer=${urls[0]}`,
        `--service-account-key-file=${f.serviceAccountKey}`,
        `--service-account-signing-key-file=${f.serviceAccountKey}`,
        // pods/log, exec, attach and port-forward reach the node agents with this identity, and check theirs.
        `--agent-client-certificate=${f.agentClient.certFile}`,
        `--agent-client-key=${f.agentClient.keyFile}`,
        `--agent-certificate-authority=${f.clusterCa.certFile}`,
        // Every node of this machine is at 127.0.0.1, for which its certificate is issued; its name need not resolve.
        '--agent-preferred-address-types=InternalIP,Hostname,InternalDNS,ExternalDNS,ExternalIP',
        ...(o.servers > 1 ? ['--endpoint-reconciler-type=lease'] : []),
        // Several API servers on this one machine already share its CPUs: one process each (one API server on etcd
        // takes the default, a process per CPU; on the embedded store it is one process anyway).
        ...(o.servers > 1 ? ['--server-processes=1'] : []),
        ...extra('apiserver'),
      ],
    });
    /**
     * The metrics server, started with the other daemons but not on the way to "running": a scraper whose first
     * figures come a resolution after its start, and whose start (module loading, about a CPU-second) would otherwise
     * compete with the API server's for the machine's CPUs — so it runs at a lower priority (nice 10). It is given
     * the client CA and the front proxy's CA as files, so that it needs no lookup of the
     * `extension-apiserver-authentication` ConfigMap (which would fail, and make it exit, while the API server is
     * still starting). Once the first API server is ready it is registered in the API (its roles, Service, Endpoints;
     * see metrics-server.ts), and the APIService once it is healthy. It scrapes the node agents every 15 s
     * (metrics-server's 60 s is long for a local cluster) and checks their certificates.
     */
    let metricsHealthy = false;
    const metricsServer = async (apiReady: Promise<boolean>): Promise<void> => {
      const port = await pickPort(preferred(4443), taken);
      const server = balancer ? `https://127.0.0.1:${balancer.port}` : urls[0]!;
      const conf = writeCertKubeconfig(f, server, 'metrics-server', f.metricsServerClient);
      const objects = metricsServerObjects(port, ca.certPem);
      const register = async (list: typeof objects): Promise<void> => {
        for (let attempt = 1; !stopping; attempt++) {
          try {
            await registerMetricsServer(urls[0]!, tokens.get(ADMIN.name)!, readFileSync(f.caFile, 'utf8'), list);
            return;
          } catch (err) {
            if (attempt >= 5) {
              io.err(`platform: could not register the metrics server in the API: ${String(err)}`);
              return;
            }
            await new Promise((r) => setTimeout(r, 200 * attempt));
          }
        }
      };
      const healthy = bring(
        {
          name: 'metrics-server',
          rank: 2,
          bin: binOf('metrics-server', 'platform-metrics-server'),
          restart: !o.keepDown?.includes('metrics-server'),
          essential: false,
          nice: 10,
          health: `https://127.0.0.1:${port}/healthz`,
          args: [
            `--clientconfig=${conf}`,
            `--secure-port=${port}`,
            '--bind-address=127.0.0.1',
            `--tls-cert-file=${f.metricsServerServing.certFile}`,
            `--tls-private-key-file=${f.metricsServerServing.keyFile}`,
            // What the API server publishes in extension-apiserver-authentication, given here instead.
            ...clientCertificateArgs,
            `--agent-certificate-authority=${f.clusterCa.certFile}`,
            '--agent-use-node-status-port',
            '--agent-preferred-address-types=InternalIP,Hostname,InternalDNS,ExternalDNS,ExternalIP',
            '--metric-resolution=15s',
            ...extra('metrics-server'),
          ],
        },
        `https://127.0.0.1:${port}`,
        false,
      );
      if (!(await apiReady)) return;
      await register(objects.slice(0, -1));
      // The APIService (the last object) once the server answers: the aggregator checks it at once and finds it
      // available, instead of failing the check and waiting for its next pass.
      metricsHealthy = await healthy;
      if (metricsHealthy) await register(objects.slice(-1));
    };

    const clients = stopping ? [] : await clientDaemons();
    const first = bring(apiSpec(0, apiPorts[0]!), urls[0]!, true);
    const rest = clients.map(([spec, detail]) => bring(spec, detail, false));
    // The other API servers start with the first: each bootstraps the same defaults, as several kube-apiservers do.
    for (const [i, port] of apiPorts.entries()) if (i > 0) rest.push(bring(apiSpec(i, port), urls[i]!, true));
    if (!stopping)
      metricsServer(first).catch((err: unknown) =>
        io.err(`platform: the metrics server could not be started: ${String(err)}`),
      );
    if (await first) rest.push(openDiscovery());
    await Promise.all(rest);

    if (!stopping) {
      const took = ((Date.now() - started) / 1000).toFixed(1);
      const summary = [
        '',
        'platform is running.',
        `  started in:   ${took}s`,
        `  API server:   ${urls.join(', ')}`,
        `  admin token:  ${tokens.get(ADMIN.name)}  (kept in ${f.tokenFile})`,
        `  kubeconfig:   ${f.kubeconfig}`,
        `  store:        ${o.store === 'etcd' ? `etcd (${o.servers} member(s)), ${storeServers}` : f.store}`,
        `  node:         ${o.nodeName} (${runtime.label} runtime)${o.simulateNodes ? ` and ${o.simulateNodes} simulated node(s)` : ''}`,
        `  metrics:      ${details.get('metrics-server') ?? '-'} (${metricsHealthy ? 'healthy' : 'starting; `platform status` shows when it is healthy'})`,
        `  logs:         ${f.logDir} (platform logs <daemon>)`,
        '',
        `  Try: kubectl --kubeconfig ${f.kubeconfig} create deployment web --image=busybox -- sleep 3600`,
        '',
      ].join('\n');
      state.phase = 'running';
      state.summary = summary;
      save();
      io.out(summary);
      io.out('Press Ctrl-C to stop (or `platform down` from another terminal).');
    }
    await stopped;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`platform: ${err.message}`);
    code = 1;
    stopping = true;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (fatal) {
      io.err(`platform: ${fatal}; stopping`);
      state.phase = 'failed';
      state.reason = fatal;
      code = 1;
    } else state.phase = 'stopping';
    if (supervisor.daemons.size) save();
    await supervisor.stopAll();
    await balancer?.close();
    if (fatal) save();
    else clearState(f.stateFile, process.pid);
    releaseLock(f.lockFile, process.pid);
  }
  if (!fatal && code === 0) io.out('platform: stopped.');
  return code;
}
