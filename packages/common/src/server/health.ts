/**
 * Health endpoints with Kubernetes 1.21's exact output (`staging/src/k8s.io/apiserver/pkg/server/healthz/healthz.go`):
 * `/healthz`, `/livez`, `/readyz` run their checks in registration order; `?verbose` lists `[+]name ok` /
 * `[-]name failed: reason withheld` and ends with `<endpoint> check passed`; `?exclude=name` (repeatable) prints
 * `[+]name excluded: ok`, and names that match no check are reported as
 * `warn: some health checks cannot be excluded: no matches for "a","b"`. A failure always answers 500 with the
 * verbose list and `<endpoint> check failed`; success without `verbose` answers `ok`. `/<endpoint>/<name>` runs one
 * check: `ok`, or 500 `internal server error: <reason>`.
 */
import { type Request, type Response, type Router } from 'express';

import { type Logger } from '../logging/logger';

/** One named check. `check` resolves when healthy and rejects (or throws) with the reason otherwise. */
export interface HealthCheck {
  readonly name: string;
  check(): Promise<void> | void;
}

/** The three check lists of a server. Lists only grow; order is registration order. */
export class HealthRegistry {
  readonly healthz: HealthCheck[] = [];
  readonly livez: HealthCheck[] = [];
  readonly readyz: HealthCheck[] = [];

  /** Adds checks to all three endpoints (Kubernetes' `AddHealthChecks`). Throws on a duplicate name. */
  addHealthChecks(...checks: HealthCheck[]): void {
    for (const c of checks) {
      for (const list of [this.healthz, this.livez, this.readyz]) addUnique(list, c);
    }
  }

  /** Adds checks to `/livez` and `/healthz` only. */
  addLivezChecks(...checks: HealthCheck[]): void {
    for (const c of checks) {
      addUnique(this.livez, c);
      addUnique(this.healthz, c);
    }
  }

  /** Adds a check to `/healthz` only (used for post-start hooks, whose `/livez` form may differ). */
  addHealthzChecks(...checks: HealthCheck[]): void {
    for (const c of checks) addUnique(this.healthz, c);
  }

  /** Adds checks to `/livez` only. */
  addLivezOnlyChecks(...checks: HealthCheck[]): void {
    for (const c of checks) addUnique(this.livez, c);
  }

  /** Adds checks to `/readyz` only (Kubernetes' `AddReadyzChecks`). */
  addReadyzChecks(...checks: HealthCheck[]): void {
    for (const c of checks) addUnique(this.readyz, c);
  }
}

function addUnique(list: HealthCheck[], c: HealthCheck): void {
  if (list.some((x) => x.name === c.name))
    throw new Error(`health check ${JSON.stringify(c.name)} is already registered`);
  list.push(c);
}

/** The always-healthy `ping` check. */
export const PING_CHECK: HealthCheck = { name: 'ping', check: () => {} };

/** A check built from a function. */
export function namedCheck(name: string, check: () => Promise<void> | void): HealthCheck {
  return { name, check };
}

async function runCheck(c: HealthCheck): Promise<Error | undefined> {
  try {
    await c.check();
    return undefined;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

function plain(res: Response, status: number, body: string): void {
  res.status(status);
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(body);
}

/** `"a","b"` as Go's `formatQuoted`. */
function formatQuoted(names: string[]): string {
  return names.map((n) => JSON.stringify(n)).join(',');
}

/**
 * Installs `/<name>` and `/<name>/<check>` on `router`. `checks` is read per request, so checks registered later
 * (post-start hooks) are served. Failed checks are logged at V(2) with their reasons (which the response withholds).
 */
export function installHealthEndpoint(
  router: Router,
  name: string,
  checks: () => readonly HealthCheck[],
  log: Logger,
): void {
  router.get(`/${name}`, (req: Request, res: Response) => {
    void (async () => {
      const query = new URL(req.originalUrl, 'http://localhost').searchParams;
      const excluded = new Set(query.getAll('exclude'));
      let out = '';
      let verboseLog = '';
      const failed: string[] = [];
      const list = checks();
      const results = await Promise.all(list.map((c) => (excluded.has(c.name) ? undefined : runCheck(c))));
      list.forEach((c, i) => {
        if (excluded.has(c.name)) {
          excluded.delete(c.name);
          out += `[+]${c.name} excluded: ok\n`;
          return;
        }
        const err = results[i];
        if (err) {
          out += `[-]${c.name} failed: reason withheld\n`;
          verboseLog += `[-]${c.name} failed: ${err.message}\n`;
          failed.push(c.name);
        } else {
          out += `[+]${c.name} ok\n`;
        }
      });
      if (excluded.size > 0) {
        const names = formatQuoted([...excluded].sort());
        out += `warn: some health checks cannot be excluded: no matches for ${names}\n`;
        log.warn('Cannot exclude some health checks, no health checks are installed matching', { checks: names });
      }
      if (failed.length > 0) {
        log.v(2).info('Health check failed', { endpoint: name, checks: failed.join(','), reasons: verboseLog });
        // Go's http.Error appends a newline.
        plain(res, 500, `${out}${name} check failed\n`);
        return;
      }
      if (!query.has('verbose')) {
        plain(res, 200, 'ok');
        return;
      }
      plain(res, 200, `${out}${name} check passed\n`);
    })().catch((err: unknown) => {
      log.error('Health endpoint failed', { endpoint: name, err });
      if (!res.headersSent) plain(res, 500, 'internal server error\n');
    });
  });
  router.get(/^\/(healthz|livez|readyz)\/(.+)$/, (req: Request, res: Response, next) => {
    const m = /^\/(healthz|livez|readyz)\/(.+)$/.exec(req.path);
    if (!m || m[1] !== name) {
      next();
      return;
    }
    const checkName = decodeURIComponent(m[2]!);
    const check = checks().find((c) => c.name === checkName);
    if (!check) {
      next();
      return;
    }
    void runCheck(check).then((err) => {
      if (err) plain(res, 500, `internal server error: ${err.message}\n`);
      else plain(res, 200, 'ok');
    });
  });
}
