/**
 * What a running cluster leaves in its state directory for `platform status`, `platform down` and `platform logs`
 * (`cluster.json`): the launcher's process id, which also marks the directory as owned by a running cluster, and
 * each daemon with its process, health URL and log file.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';

/** One daemon of a running cluster. */
export interface DaemonState {
  name: string;
  pid?: number;
  /** None: running counts as healthy. */
  health?: string;
  log: string;
  /** What a person calls it by (the API server's URL, the node's name). */
  detail?: string;
}

/** The state file's content. */
export interface ClusterState {
  /** The launcher's process. */
  pid: number;
  phase: 'starting' | 'running' | 'stopping' | 'failed';
  /** Why the cluster failed to start (phase `failed`). */
  reason?: string;
  /** The summary printed when the cluster was ready. */
  summary?: string;
  daemons: DaemonState[];
}

/** Whether process `pid` exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The state of the cluster kept in `file`, when its launcher is still running. */
export function readState(file: string): ClusterState | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const s = JSON.parse(readFileSync(file, 'utf8')) as ClusterState;
    return typeof s.pid === 'number' && alive(s.pid) ? s : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the state atomically (a reader never sees half a file). */
export function writeState(file: string, s: ClusterState): void {
  writeFileSync(`${file}.tmp`, `${JSON.stringify(s, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}

/** Removes the state file if it is the launcher `pid`'s. */
export function clearState(file: string, pid: number): void {
  try {
    const s = JSON.parse(readFileSync(file, 'utf8')) as ClusterState;
    if (s.pid !== pid) return;
  } catch {
    // unreadable: ours to remove
  }
  rmSync(file, { force: true });
}

/**
 * Takes the state directory for launcher `pid` (an exclusive lock file naming it). Returns the process id of the
 * running launcher that holds it instead, if any; a lock left by a launcher that is gone is taken over.
 */
export function acquireLock(lockFile: string, pid: number): number | undefined {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(lockFile, `${pid}\n`, { flag: 'wx' });
      return undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(lockFile, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== pid && alive(holder)) return holder;
      rmSync(lockFile, { force: true });
    }
  }
  throw new Error(`could not take the lock ${lockFile}`);
}

/** Releases the lock if `pid` holds it. */
export function releaseLock(lockFile: string, pid: number): void {
  try {
    if (Number(readFileSync(lockFile, 'utf8').trim()) === pid) rmSync(lockFile, { force: true });
  } catch {
    // already gone
  }
}
