/**
 * `--server-processes`: the API server as several processes on one port, so that it uses every CPU of the machine.
 *
 * A Node.js process serves on one thread, and on etcd a request's CPU (TLS, decoding, admission, encoding, the etcd
 * client) is what limits the API server. Kubernetes runs several kube-apiservers over one etcd for the same reason
 * and for availability; this is that, on one machine: a primary process forks N server processes (`node:cluster`)
 * that share the listening socket, and each is a whole API server over the same etcd (its own watch caches, fed by
 * its own etcd watches, so correct by construction; its own post-start hooks, which tolerate several servers as
 * they must in HA). Node's round-robin scheduling (the default on Linux; `NODE_CLUSTER_SCHED_POLICY=none` leaves it to
 * the kernel) hands each new connection to the next server process. SO_REUSEPORT (independent processes, no primary)
 * needs Node.js 22.12, which we do not require.
 *
 * The primary opens no store and serves nothing: it checks the command line once (so errors are printed once and
 * a self-signed certificate is generated once, before any process reads it), forks the processes, restarts one that
 * dies, and on SIGTERM or SIGINT asks each to shut down gracefully (over the IPC channel, so that a SIGTERM that also
 * reaches the processes themselves — systemd's control-group kill — counts once); a second signal kills them. A
 * server process exits by itself when the primary goes away (node:cluster's disconnect).
 *
 * The embedded store has a single owner (the lock on `<file>.lock`): with it, more than one process is refused.
 */
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

import { type Logger } from '@platform/common';

/** The option. */
export const SERVER_PROCESSES_FLAG = 'server-processes';
/** Environment variable that tells a server process its slot (1..N), stable across restarts. */
const SLOT_ENV = 'PLATFORM_APISERVER_PROCESS';
/** The message the primary sends a server process to shut it down gracefully. */
const SHUTDOWN_MESSAGE = 'platform-apiserver:shutdown';
/** A server process that dies sooner than this after its start is restarted with a growing delay. */
const QUICK_EXIT_MS = 10_000;
const MAX_RESTART_DELAY_MS = 30_000;

/** The backing store servers of the command line (`--store-servers`, `--store-servers-overrides`). */
export interface StoreServers {
  servers: readonly string[];
  overrides?: readonly string[];
}

/** The embedded-store URLs among `s`, overrides included (`group/resource#server;server`). */
function embeddedStores(s: StoreServers): string[] {
  const all = [...s.servers, ...(s.overrides ?? []).flatMap((o) => (o.split('#')[1] ?? '').split(';'))];
  return all.filter((u) => u.startsWith('sqlite:'));
}

/**
 * The number of server processes: `requested`, or when it is 0, the number of CPUs on etcd and 1 on the embedded
 * store. Throws an error naming the option when more than one is asked for on the embedded store.
 */
export function resolveServerProcesses(requested: number, stores: StoreServers, cpus = availableParallelism()): number {
  const embedded = embeddedStores(stores);
  if (requested === 0) return embedded.length > 0 ? 1 : Math.max(1, cpus);
  if (requested > 1 && embedded.length > 0)
    throw new Error(
      `--${SERVER_PROCESSES_FLAG}=${requested}: the embedded store ${embedded[0]} is owned by one process (it holds ` +
        `the lock of its file), so it is served by one: use --${SERVER_PROCESSES_FLAG}=1 (0 chooses 1 on this store), ` +
        'or serve from etcd',
    );
  return requested;
}

/** This process's slot (1..N) when it is one of several server processes; undefined in a lone API server. */
export function serverProcessSlot(): number | undefined {
  if (!cluster.isWorker) return undefined;
  const slot = Number(process.env[SLOT_ENV]);
  return Number.isInteger(slot) && slot > 0 ? slot : cluster.worker?.id;
}

/**
 * In a server process: resolves when the primary asks for a graceful shutdown. Call it first thing, so that a
 * request that comes while the server is still being built is not missed. Never resolves in a lone API server.
 */
export function shutdownRequested(): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!cluster.isWorker) return;
    const onMessage = (m: unknown): void => {
      if (m !== SHUTDOWN_MESSAGE) return;
      process.off('message', onMessage);
      resolve();
    };
    process.on('message', onMessage);
  });
}

/** What the primary is told. */
export interface PrimaryOptions {
  /** How many server processes (at least 2; 1 runs the server in the process itself). */
  processes: number;
  /** The command line, given unchanged to every server process. */
  argv: readonly string[];
  log: Logger;
  /** The process whose SIGTERM/SIGINT stop the group (tests pass an emitter). */
  signals?: Pick<NodeJS.EventEmitter, 'on' | 'off'>;
}

/** One slot's process. */
interface Slot {
  slot: number;
  startedAt: number;
  listening: boolean;
}

/**
 * The command each server process runs: the `platform-apiserver` command when this module is compiled, else
 * `main.ts` through the TypeScript hook (benchmarks and tests run from sources).
 */
function setupWorkers(argv: readonly string[]): void {
  if (__filename.endsWith('.js')) {
    cluster.setupPrimary({ exec: join(__dirname, '..', '..', 'bin', 'platform-apiserver'), args: [...argv] });
  } else {
    cluster.setupPrimary({
      exec: join(__dirname, 'main.ts'),
      args: [...argv],
      execArgv: ['-r', join(__dirname, '..', 'storage', 'testing', 'ts-register.js')],
    });
  }
}

/**
 * Runs the primary: forks `processes` server processes and supervises them until they have all exited after a
 * signal (see the module comment). Resolves with the exit code: 0 when every process shut down cleanly, 1 when one
 * failed to start (and no other was serving) or did not exit cleanly.
 */
export function runServerProcesses(o: PrimaryOptions): Promise<number> {
  const log = o.log;
  const signals = o.signals ?? process;
  setupWorkers(o.argv);
  const slots = new Map<Worker, Slot>();
  const quickExits = new Map<number, number>();
  const restarts = new Set<NodeJS.Timeout>();
  let stopping = false;
  let failed = false;
  let signalCount = 0;
  return new Promise<number>((resolve) => {
    const finishIfDone = (): void => {
      if (!stopping || slots.size > 0 || restarts.size > 0) return;
      signals.off('SIGTERM', onSignal);
      signals.off('SIGINT', onSignal);
      cluster.off('exit', onExit);
      log.info('Every server process has exited', { clean: !failed });
      resolve(failed ? 1 : 0);
    };
    const fork = (slot: number): void => {
      const worker = cluster.fork({ [SLOT_ENV]: String(slot) });
      const state: Slot = { slot, startedAt: Date.now(), listening: false };
      slots.set(worker, state);
      worker.once('listening', () => (state.listening = true));
      // An IPC failure (a message to a process that is going away): its exit is what counts.
      worker.on('error', (err: Error) => log.warn('Server process IPC error', { process: slot, err }));
      log.info('Started a server process', { process: slot, pid: worker.process.pid });
    };
    const stopAll = (): void => {
      stopping = true;
      for (const t of restarts) clearTimeout(t);
      restarts.clear();
      for (const worker of slots.keys()) {
        // The IPC channel asks for a graceful shutdown; without it (a process past its disconnect), a signal does.
        if (worker.isConnected()) worker.send(SHUTDOWN_MESSAGE);
        else worker.process.kill('SIGTERM');
      }
      finishIfDone();
    };
    const onSignal = (signal: NodeJS.Signals): void => {
      if (++signalCount > 1) {
        log.warn('Received a second signal: killing the server processes', { signal });
        failed = true;
        for (const worker of slots.keys()) worker.process.kill('SIGKILL');
        return;
      }
      log.info('Received signal, shutting down the server processes', { signal, processes: slots.size });
      stopAll();
    };
    const onExit = (worker: Worker, code: number | null, signal: string | null): void => {
      const state = slots.get(worker);
      if (!state) return;
      slots.delete(worker);
      const fields = { process: state.slot, pid: worker.process.pid, code, signal };
      if (stopping) {
        if (code !== 0) failed = true;
        log.info('A server process exited', fields);
        finishIfDone();
        return;
      }
      // A process that fails before it ever listened, with no other serving, is a failed start (port in use, say):
      // the group stops with an error rather than restarting it forever.
      if (!state.listening && ![...slots.values()].some((s) => s.listening)) {
        log.error('A server process failed to start; stopping the others', fields);
        failed = true;
        stopAll();
        return;
      }
      const quick = Date.now() - state.startedAt < QUICK_EXIT_MS;
      const n = quick ? (quickExits.get(state.slot) ?? 0) + 1 : 0;
      quickExits.set(state.slot, n);
      const delayMs = n === 0 ? 0 : Math.min(1000 * 2 ** (n - 1), MAX_RESTART_DELAY_MS);
      log.error('A server process exited; restarting it', { ...fields, restartInMs: delayMs });
      const t = setTimeout(() => {
        restarts.delete(t);
        if (!stopping) fork(state.slot);
      }, delayMs);
      restarts.add(t);
    };
    cluster.on('exit', onExit);
    signals.on('SIGTERM', onSignal);
    signals.on('SIGINT', onSignal);
    log.info('Starting the server processes', { processes: o.processes });
    for (let slot = 1; slot <= o.processes; slot++) fork(slot);
  });
}
