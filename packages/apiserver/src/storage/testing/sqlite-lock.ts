/**
 * Holds the write lock of a SQLite database from another process, as a backup tool or an `sqlite3` shell left in
 * `BEGIN EXCLUSIVE` does (in WAL mode that is the write lock: readers go on, every writer waits).
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** A child process holding the lock. */
export interface SqliteLockHolder {
  /** The holder's process id. */
  readonly pid: number;
  /** Rolls back, closes the database and waits for the holder to exit (the lock is then free). Idempotent. */
  release(): Promise<void>;
}

/** The holder: takes the lock, says `locked`, and rolls back when its stdin ends. */
const HOLDER = `
const Database = require(process.argv[1]);
const db = new Database(process.argv[2], { timeout: 30000 });
db.exec('BEGIN EXCLUSIVE');
process.stdout.write('locked\\n');
process.stdin.resume();
process.stdin.on('end', () => { db.exec('ROLLBACK'); db.close(); process.exit(0); });
`;

/** Starts a holder of `path`'s write lock; resolves once it has the lock (waits up to 60 s for it). */
export async function holdSqliteLock(path: string): Promise<SqliteLockHolder> {
  const child = spawn(process.execPath, ['-e', HOLDER, require.resolve('better-sqlite3'), path], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error('the lock holder did not get the lock within 60 s')), 60000);
    const fail = (e: Error): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(e);
    };
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('locked\n')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => fail(new Error(`the lock holder exited with code ${code}: ${stderr}`)));
  });
  return { pid: child.pid!, release: () => release(child, exited) };
}

async function release(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.stdin!.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), 30000);
  await exited;
  clearTimeout(timer);
}
