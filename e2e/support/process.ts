/**
 * Daemons as real processes for end-to-end tests: spawn a built binary, keep its output for failure messages, wait
 * for a condition, stop it with a signal and collect its exit code.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';

/** The repository root. */
export const ROOT = join(__dirname, '..', '..');

/** A running daemon. */
export interface Daemon {
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Sends a signal and resolves with the exit code (null when killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

/** Starts `packages/<pkg>/bin/<bin>` with `args`. */
export function startDaemon(pkg: string, bin: string, args: string[]): Daemon {
  const child = spawn(process.execPath, [join(ROOT, 'packages', pkg, 'bin', bin), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** One HTTPS request that trusts `ca`; resolves with status and text (never rejects on HTTP errors). */
export function get(
  url: string,
  ca: string | undefined,
  o: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      // A connection per request: a pooled one may have been closed by the server between tests.
      { method: o.method ?? 'GET', ...(ca ? { ca } : { rejectUnauthorized: false }), headers: o.headers, agent: false },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(o.body);
  });
}

/** Polls `check` every 100 ms until it returns true or `timeoutMs` passes (then throws with `what`). */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
