/**
 * `platform-node-agent`: options → configuration → run (STYLE.md §7). The command line is parsed, the `--config`
 * file read (command-line values win), every problem printed together (exit 1). Then: the lock file, the swap and
 * kernel checks, the client, the runtime, the agent (or `--simulate-nodes` simulated nodes), its servers; SIGTERM or
 * SIGINT stops everything.
 */
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { dirname } from 'node:path';
import { setFlagsFromString } from 'node:v8';

import { parseQuantity } from '@platform/api';
import { Clientset, loadClientConfig, RestClient } from '@platform/client';
import {
  createLogging,
  FeatureGate,
  FeatureGateOptions,
  type Logger,
  type LoggingConfig,
  LoggingOptions,
  NODE_AGENT_FEATURES,
  type OptionGroup,
  parseOrExit,
  VersionOptions,
} from '@platform/common';
import { Command } from 'commander';

import { Agent } from '../agent';
import { EvictionManager } from '../eviction/eviction-manager';
import { bootstrapClientCertificate } from '../node/bootstrap';
import { defaultHostname } from '../node/node-status';
import { BuiltinRuntime } from '../runtime/builtin/builtin-runtime';
import type * as Cri from '../runtime/cri/cri-runtime';
import { ImageGcManager } from '../runtime/cri/image-gc';
import { ContainerLogRotator } from '../runtime/cri/logs';
import { type Runtime } from '../runtime/runtime';
import { AgentServers, startHealthzServer } from '../server/server';
import { SimulatedNodes } from '../runtime/simulated/simulated-nodes';
import { AgentOptions, type AgentValues } from './options';

const NAME = 'platform-node-agent';

/** Every option family of the node agent, registered on `cmd` (also used to generate the reference docs). */
export function nodeAgentCommand(): {
  cmd: Command;
  groups: OptionGroup<never>[];
  version: VersionOptions;
  agent: AgentOptions;
  logging: LoggingOptions;
} {
  const cmd = new Command(NAME).description(
    'The node agent is the primary "node agent" that runs on each node. It registers the node with the API server using the host name, a host name override, or cloud provider logic, and works in terms of PodSpecs: it takes pod specifications provided through various mechanisms (primarily the API server, also manifest files and a manifest URL) and ensures that the containers described in them are running and healthy. It does not manage containers which were not created by the platform.',
  );
  const gate = new FeatureGate(NODE_AGENT_FEATURES);
  const version = new VersionOptions('node-agent');
  const agent = new AgentOptions(gate);
  const logging = new LoggingOptions(
    'This parameter should be set via the config file specified by the --config flag.',
  );
  const groups = [
    agent,
    new FeatureGateOptions(gate, 'This parameter should be set via the config file specified by the --config flag.'),
    logging,
    version,
  ] as OptionGroup<never>[];
  for (const g of groups) g.addFlags(cmd);
  return { cmd, groups, version, agent, logging };
}

/** The first non-internal IPv4 address of the machine, else 127.0.0.1 (the kubelet looks up the host name). */
export function defaultNodeIp(): string {
  for (const addrs of Object.values(networkInterfaces()))
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return '127.0.0.1';
}

function checkSwap(): string | undefined {
  try {
    const lines = readFileSync('/proc/swaps', 'utf8').trim().split('\n');
    return lines.length > 1
      ? `running with swap on is not supported, please disable swap! or set --fail-swap-on flag to false. /proc/swaps contained: ${JSON.stringify(lines)}`
      : undefined;
  } catch {
    return undefined;
  }
}

/** Kernel tunables the kubelet expects (`protectKernelDefaults`). */
const KERNEL_DEFAULTS: Record<string, number> = {
  'vm/overcommit_memory': 1,
  'vm/panic_on_oom': 0,
  'kernel/panic': 10,
  'kernel/panic_on_oops': 1,
  'kernel/keys/root_maxkeys': 1000000,
  'kernel/keys/root_maxbytes': 25000000,
};

function checkKernel(): string[] {
  const errs: string[] = [];
  for (const [k, want] of Object.entries(KERNEL_DEFAULTS)) {
    try {
      const have = Number(readFileSync(`/proc/sys/${k}`, 'utf8').trim());
      if (have !== want) errs.push(`invalid kernel flag: ${k}, expected value: ${want}, actual value: ${have}`);
    } catch {
      // absent
    }
  }
  return errs;
}

function acquireLock(path: string): number {
  mkdirSync(dirname(path), { recursive: true });
  try {
    return openSync(path, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    // A stale lock (its holder is gone) is taken over.
    const pid = Number(readFileSync(path, 'utf8').trim());
    let alive = false;
    try {
      if (pid > 0) process.kill(pid, 0);
      alive = pid > 0;
    } catch {
      alive = false;
    }
    if (alive && pid !== process.pid) throw new Error(`lock file ${path} is held by process ${pid}`);
    return openSync(path, 'w');
  }
}

/** The CRI runtime's module, loaded when used: its gRPC client is a tenth of a second of a start on the builtin runtime. */
function criRuntime(): typeof Cri {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('../runtime/cri/cri-runtime') as typeof Cri;
}

/** Builds the runtime the options ask for. */
export function makeRuntime(v: AgentValues, nodeIp: string, log: Logger): Runtime {
  if (v.containerRuntime === 'remote')
    return new (criRuntime().CriRuntime)({
      endpoint: v.containerRuntimeEndpoint,
      ...(v.imageServiceEndpoint ? { imageEndpoint: v.imageServiceEndpoint } : {}),
      requestTimeoutMs: v.runtimeRequestTimeout,
      sandboxImage: v.podInfraContainerImage,
      // Host-network pods have the node's address as theirs.
      nodeIp,
      log: log.child('cri'),
    });
  return new BuiltinRuntime({
    dir: `${v.rootDir}/builtin`,
    nodeIp,
    allowRoot: v.builtinAllowRoot,
    defaultUid: v.builtinRunAsUser,
    logger: log.child('builtin'),
  });
}

/** How often container logs are checked for rotation, and images collected (the kubelet's periods). */
const LOG_ROTATION_PERIOD_MS = 10_000;
const IMAGE_GC_PERIOD_MS = 5 * 60_000;

/**
 * The remote runtime's housekeeping, until `signal` aborts: container logs rotated by `--container-log-max-size`
 * and `--container-log-max-files`, and images collected by `--image-gc-high-threshold`/`--image-gc-low-threshold`
 * and `--minimum-image-ttl-duration` (the sandbox image is kept). The builtin runtime has neither images nor the
 * CRI's reopening of logs. Periods shorten in tests through `PLATFORM_AGENT_HOUSEKEEPING_MS`.
 */
export function startCriHousekeeping(runtime: Runtime, v: AgentValues, log: Logger, signal: AbortSignal): void {
  // By the runtime's name first: the CRI module (and its gRPC) is loaded only for a remote runtime.
  if (runtime.name !== 'remote' || !(runtime instanceof criRuntime().CriRuntime)) return;
  const rotator = new ContainerLogRotator(runtime, {
    maxSizeBytes: Number(parseQuantity(v.containerLogMaxSize).value()),
    maxFiles: v.containerLogMaxFiles,
  });
  const gc = new ImageGcManager(runtime, {
    highThresholdPercent: v.imageGcHighThreshold,
    lowThresholdPercent: v.imageGcLowThreshold,
    minAgeMs: v.minimumImageTtlDuration,
    pinnedImages: [v.podInfraContainerImage],
  });
  const every = (ms: number, what: string, f: () => Promise<unknown>): void => {
    const override = Number(process.env.PLATFORM_AGENT_HOUSEKEEPING_MS);
    const period = override > 0 ? override : ms;
    let running = false;
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      f()
        .catch((err: unknown) => log.warn(`${what} failed; will retry`, { err: String(err) }))
        .finally(() => (running = false));
    }, period);
    timer.unref();
    signal.addEventListener('abort', () => clearInterval(timer), { once: true });
  };
  // The first pass only records the images present (none is old enough to go yet).
  gc.detectImages().catch((err: unknown) => log.warn('Listing images failed', { err: String(err) }));
  every(LOG_ROTATION_PERIOD_MS, 'Container log rotation', () => rotator.rotateAll());
  every(IMAGE_GC_PERIOD_MS, 'Image garbage collection', async () => {
    const r = await gc.garbageCollect();
    if (r.removed.length) log.info('Image garbage collection', { freed: r.freed, removed: r.removed });
  });
}

/** Runs the node agent with `argv` (without node and script). Resolves with the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  // V8's --optimize-for-size, set here because NODE_OPTIONS refuses it and every launcher should have it: the old
  // generation grows less past what is live, so a burst of pod starts leaves less resident memory behind (through
  // containerd, 100 pods: see docs/node-agent.md, Figures). Its CPU cost did not show in the benchmarks.
  setFlagsFromString('--optimize-for-size');
  const { cmd, groups, version, agent: agentOptions } = nodeAgentCommand();
  const outcome = parseOrExit(cmd, groups, argv, version);
  if (outcome.exitCode !== undefined) return outcome.exitCode;
  const collected: { logging?: LoggingConfig; agent?: AgentValues } = {};
  for (const g of groups) await (g as OptionGroup<typeof collected>).applyTo(collected);
  const v = agentOptions.values;
  const logging = createLogging({ config: collected.logging as LoggingConfig, program: NAME });
  const log = logging.logger;
  const fail = async (msg: string, fields?: Record<string, unknown>): Promise<number> => {
    log.error(msg, fields);
    process.stderr.write(`Error: ${msg}${fields?.err ? `: ${String(fields.err)}` : ''}\n`);
    await logging.close();
    return 1;
  };

  let lockFd: number | undefined;
  if (v.lockFile) {
    try {
      lockFd = acquireLock(v.lockFile);
      writeFileSync(lockFd, String(process.pid));
    } catch (err) {
      return fail('Failed to acquire the lock file', { err: String(err) });
    }
  }
  if (v.failSwapOn && v.simulateNodes === 0) {
    const swap = checkSwap();
    if (swap) return fail(swap);
  }
  if (v.protectKernelDefaults) {
    const errs = checkKernel();
    if (errs.length > 0) return fail(errs.join('; '));
  }

  if (v.rotateCertificates) {
    return fail('--rotate-certificates: client certificate rotation is not supported yet (bootstrap is)');
  }
  if (v.bootstrapClientConfig && v.simulateNodes === 0) {
    if (!v.clientConfig) {
      return fail(
        '--bootstrap-clientconfig needs --clientconfig: the path the bootstrapped client configuration is written to',
      );
    }
    try {
      await bootstrapClientCertificate({
        clientConfigPath: v.clientConfig,
        bootstrapConfigPath: v.bootstrapClientConfig,
        certDir: v.certDir,
        nodeName: defaultHostname(v.hostnameOverride),
        log: log.child('bootstrap'),
        signal: new AbortController().signal,
      });
    } catch (err) {
      return fail('Failed to bootstrap the client certificate', { err: String(err) });
    }
  }

  let clientset: Clientset | undefined;
  let eventClientset: Clientset | undefined;
  if (v.clientConfig) {
    try {
      const rest = new RestClient(
        {
          ...loadClientConfig({ clientConfig: v.clientConfig }),
          contentType: v.apiContentType,
          // Simulated nodes need a lease write per node every 10 s: at least N/2 QPS.
          qps: v.simulateNodes > 0 ? Math.max(v.apiQps, v.simulateNodes / 2) : v.apiQps,
          burst: v.simulateNodes > 0 ? Math.max(v.apiBurst, v.simulateNodes) : v.apiBurst,
          userAgent: `${NAME}/v1.21.0`,
        },
        { logger: log.child('client') },
      );
      clientset = new Clientset(rest);
      // Events have a client of their own (the kubelet's EventClient): they do not take the pods' API budget.
      eventClientset = new Clientset(
        new RestClient(
          {
            ...loadClientConfig({ clientConfig: v.clientConfig }),
            contentType: v.apiContentType,
            qps: v.eventQps,
            burst: v.eventBurst,
            userAgent: `${NAME}/v1.21.0`,
          },
          { logger: log.child('events-client') },
        ),
      );
    } catch (err) {
      return fail('Failed to load the client configuration', { err: String(err) });
    }
  }

  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  if (v.exitOnLockContention && v.lockFile) {
    // Another process touching the lock file (the next agent) ends this one.
    const { watch } = await import('node:fs');
    const w = watch(v.lockFile, () => {
      log.info('Lock file contention: exiting');
      stop.abort();
    });
    stop.signal.addEventListener('abort', () => w.close(), { once: true });
  }

  try {
    if (v.simulateNodes > 0) {
      if (!clientset) return fail('--simulate-nodes needs --clientconfig');
      const sim = new SimulatedNodes({ clientset, values: v, log: log.child('simulated') });
      // The health server of the process; each simulated node serves its metrics on its own address (SimulatedNodes).
      const health = v.healthzPort > 0 ? await startHealthzServer(v.healthzBindAddress, v.healthzPort) : undefined;
      log.info('Starting simulated nodes', { count: v.simulateNodes, healthzPort: health?.port });
      await sim.run(stop.signal);
      await health?.stop();
    } else {
      const nodeName = defaultHostname(v.hostnameOverride);
      const nodeIp = v.nodeIp || defaultNodeIp();
      const runtime = makeRuntime(v, nodeIp, log);
      const agent = new Agent({
        values: v,
        runtime,
        ...(clientset ? { clientset } : {}),
        ...(eventClientset ? { eventClientset } : {}),
        log,
        nodeName,
        nodeIp,
      });
      agent.eviction = new EvictionManager({
        values: v,
        log: log.child('eviction'),
        pods: () => agent.activePods(),
        evict: (pod, message, grace) => agent.evict(pod, message, grace),
      });
      const servers = new AgentServers({
        agent,
        values: v,
        runtime,
        ...(clientset ? { clientset } : {}),
        log: log.child('server'),
      });
      if (!v.runonce) await servers.start();
      startCriHousekeeping(runtime, v, log.child('housekeeping'), stop.signal);
      log.info('Node agent started', { node: nodeName, nodeIp, runtime: runtime.name });
      if (v.runonce) {
        await runOnce(agent, v, stop, log);
      } else {
        await agent.run(stop.signal);
      }
      await servers.stop();
    }
  } catch (err) {
    return fail('Node agent failed', { err: String((err as Error)?.stack ?? err) });
  } finally {
    if (lockFd !== undefined) closeSync(lockFd);
  }
  log.info('Shut down cleanly');
  await logging.close();
  return 0;
}

/** `--runonce`: start the pods of the local sources, wait until each ran (or failed), then exit. */
async function runOnce(agent: Agent, v: AgentValues, stop: AbortController, log: Logger): Promise<void> {
  const run = agent.run(stop.signal);
  const deadline = Date.now() + 5 * 60_000;
  // The local sources are read in the background: their pods count only once each has been read (a slow first read
  // must not look like a source without pods).
  const sources = [...(v.podManifestPath ? ['file' as const] : []), ...(v.manifestUrl ? ['http' as const] : [])];
  while (!stop.signal.aborted && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500));
    if (!sources.every((s) => agent.sourceSeen(s))) continue;
    const pods = agent.pods();
    const done = pods.every((p) => {
      const s = agent.statuses.get(p.metadata?.uid ?? '');
      return s && (s.phase === 'Running' || s.phase === 'Succeeded' || s.phase === 'Failed');
    });
    if (done) break;
  }
  for (const p of agent.pods())
    log.info('Pod status', { pod: p.metadata?.name, phase: agent.statuses.get(p.metadata?.uid ?? '')?.phase });
  stop.abort();
  await run;
}
