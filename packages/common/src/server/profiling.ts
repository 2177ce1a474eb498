/**
 * `/debug/pprof/` when `--profiling` is on. Node has no pprof, so the paths keep Go's names and serve the V8
 * equivalents:
 * - `GET /debug/pprof/` — an index of the paths below;
 * - `GET /debug/pprof/profile?seconds=N` — a CPU profile over N seconds (default 30, 1–600) from the inspector's
 *   `Profiler`, as a `.cpuprofile` JSON file (open it in Chrome DevTools or speedscope);
 * - `GET /debug/pprof/heap` — a V8 heap snapshot (`.heapsnapshot`, streamed; the process pauses while it is taken).
 * One CPU profile runs at a time; a second request gets 500 like Go's "cpu profiling already in use".
 */
import { Session } from 'node:inspector';
import { getHeapSnapshot } from 'node:v8';

import { type Request, type Response, type Router } from 'express';

const INDEX = `<html><head><title>/debug/pprof/</title></head><body>
/debug/pprof/<br>
<br>
Types of profiles available:<br>
<a href="profile">profile</a>: CPU profile (V8 .cpuprofile). You can specify the duration in the seconds GET parameter.<br>
<a href="heap">heap</a>: V8 heap snapshot (.heapsnapshot).<br>
</body></html>
`;

function post<T>(session: Session, method: string): Promise<T> {
  return new Promise((resolve, reject) => {
    session.post(method, (err, result) => (err ? reject(err) : resolve(result as T)));
  });
}

/**
 * Installs the profiling routes. `signal` ends a running CPU profile early (server shutdown); `delay` waits
 * (injected in tests).
 */
export function installProfiling(
  router: Router,
  signal: AbortSignal,
  delay: (ms: number, signal: AbortSignal) => Promise<void> = abortableDelay,
): void {
  let profiling = false;
  router.get(['/debug/pprof', '/debug/pprof/'], (_req: Request, res: Response) => {
    res.type('text/html; charset=utf-8').send(INDEX);
  });
  router.get('/debug/pprof/profile', (req: Request, res: Response) => {
    const raw = new URL(req.originalUrl, 'http://localhost').searchParams.get('seconds') ?? '30';
    const seconds = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
    if (!(seconds >= 1 && seconds <= 600)) {
      res
        .status(400)
        .type('text/plain; charset=utf-8')
        .send(`Bad Request: seconds must be an integer between 1 and 600, got ${JSON.stringify(raw)}\n`);
      return;
    }
    if (profiling) {
      res
        .status(500)
        .type('text/plain; charset=utf-8')
        .send('Could not enable CPU profiling: cpu profiling already in use\n');
      return;
    }
    profiling = true;
    const session = new Session();
    const stop = new AbortController();
    const onAbort = (): void => stop.abort();
    signal.addEventListener('abort', onAbort);
    res.on('close', onAbort);
    void (async () => {
      try {
        session.connect();
        await post(session, 'Profiler.enable');
        await post(session, 'Profiler.start');
        await delay(seconds * 1000, stop.signal);
        const { profile } = await post<{ profile: unknown }>(session, 'Profiler.stop');
        if (!res.writableEnded && !res.destroyed) {
          res.setHeader('Content-Type', 'application/json');
          res.setHeader('Content-Disposition', 'attachment; filename="profile.cpuprofile"');
          res.setHeader('X-Content-Type-Options', 'nosniff');
          res.end(JSON.stringify(profile));
        }
      } catch (err) {
        if (!res.headersSent)
          res
            .status(500)
            .type('text/plain; charset=utf-8')
            .send(`Could not take CPU profile: ${(err as Error).message}\n`);
      } finally {
        signal.removeEventListener('abort', onAbort);
        session.disconnect();
        profiling = false;
      }
    })();
  });
  router.get('/debug/pprof/heap', (_req: Request, res: Response) => {
    res.setHeader('Content-Type', 'application/octet-stream');
    res.setHeader('Content-Disposition', 'attachment; filename="heap.heapsnapshot"');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    const snapshot = getHeapSnapshot();
    snapshot.on('error', () => res.destroy());
    snapshot.pipe(res);
  });
}

/** Resolves after `ms`, or early when `signal` aborts. */
export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
