/**
 * Runs controllers in the test process against a real API server (in-process, SQLite in a temporary directory),
 * with the same {@link ControllerContext} the daemon gives them. Tests create objects through `client` and wait
 * for the controllers' writes.
 */
import { setMaxListeners } from 'node:events';

import { EventKind } from '@platform/api';
import { startTestServer, testLogger, type TestServer, type TestServerOptions } from '@platform/apiserver';
import { MetricsRegistry } from '@platform/common';
import { Clientset, EventRecorder, InformerFactory, RestClient } from '@platform/client';

import { type ControllerContext, type ControllerDefinition } from '../controller';

/** A test API server with controllers running against it. */
export interface ControllerHarness {
  server: TestServer;
  /** An unthrottled client for the test's own reads and writes. */
  client: Clientset;
  /** Errors thrown by controllers' `run` (a test usually expects none). */
  errors: unknown[];
  /** Health problems reported by controllers, by name. */
  health: Map<string, string | undefined>;
  /** Starts a controller (options from its definition's defaults, changed by `configure`); returns its stopper. */
  start<O>(def: ControllerDefinition<O>, configure?: (o: O) => void): () => Promise<void>;
  /** Stops every controller, then the server. */
  stop(): Promise<void>;
}

/** Polls `check` every 25 ms until it holds, or throws naming `what` after `timeoutMs` (generous by default). */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Starts an API server for controller tests. */
export async function startControllerHarness(o: TestServerOptions = {}): Promise<ControllerHarness> {
  const server = await startTestServer(o);
  const rest = (): RestClient => new RestClient({ server: server.url, ca: Buffer.from(server.ca), token: 't', qps: 0 });
  const client = new Clientset(rest());
  const errors: unknown[] = [];
  const health = new Map<string, string | undefined>();
  const running: { abort: AbortController; done: Promise<void> }[] = [];

  const start = <O>(def: ControllerDefinition<O>, configure?: (o: O) => void): (() => Promise<void>) => {
    const opts = def.options?.();
    if (opts) {
      const problems = opts.validate();
      if (problems.length) throw problems[0];
    }
    const values = (opts?.values() ?? {}) as O;
    configure?.(values);
    const abort = new AbortController();
    setMaxListeners(0, abort.signal);
    const cs = new Clientset(rest());
    const informers = new InformerFactory(cs, { minResyncPeriodMs: 0 });
    const ctx: ControllerContext = {
      name: def.name,
      client: cs,
      informers,
      startInformers: () => informers.start(abort.signal),
      // Every Event reaches the API: tests check what controllers record (the daemon's spam filter is the recorder's,
      // tested with it), and a loaded machine's repeated syncs must not use up a per-object burst.
      recorder: new EventRecorder({ events: cs.resource(EventKind), component: `${def.name}-controller`, qps: 0 }),
      logger: testLogger(errors),
      metrics: new MetricsRegistry(),
      rootCA: Buffer.from(server.ca),
      signal: abort.signal,
      setHealth: (p) => health.set(def.name, p),
    };
    const done = def.run(ctx, values).catch((err: unknown) => {
      errors.push(err);
    });
    // As the daemon does: informers asked for while the controller started are started once it has.
    setImmediate(() => informers.start(abort.signal));
    const entry = { abort, done };
    running.push(entry);
    return async () => {
      abort.abort();
      await done;
      await informers.shutdown();
    };
  };

  return {
    server,
    client,
    errors,
    health,
    start,
    stop: async () => {
      for (const r of running) r.abort.abort();
      await Promise.all(running.map((r) => r.done));
      await server.stop();
    },
  };
}
