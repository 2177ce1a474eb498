/**
 * API Priority and Fairness (model: Kubernetes 1.21 `apiserver/pkg/util/flowcontrol/apf_controller.go`,
 * `apf_filter.go`, `pkg/server/filters/priority-and-fairness.go` and the config producer of
 * `pkg/registry/flowcontrol/rest`): the server's FlowSchemas and PriorityLevelConfigurations, read from its own
 * registry, decide for every request (but long-running ones, which 1.21 lets through) a flow and a priority level.
 * Exempt levels execute at once; limited levels share the server's concurrency limit (`--max-requests-inflight` +
 * `--max-mutating-requests-inflight`) in proportion to their assured concurrency shares, each with its own fair
 * queues (see {@link QueueSet}). A request that a level can neither execute nor queue gets 429 with `Retry-After`.
 *
 * The controller also keeps the bootstrap configuration (mandatory objects restored, suggested ones created), sets
 * each FlowSchema's `Dangling` condition, exposes `apiserver_flowcontrol_*` metrics and the
 * `/debug/api_priority_and_fairness/dump_*` tables.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';

import {
  type ApiObject,
  type FlowSchema,
  type FlowSchemaCondition,
  FLOWCONTROL_GROUP,
  type PriorityLevelConfiguration,
  tooManyRequests,
} from '@platform/api';
import { type Logger, type MetricsRegistry } from '@platform/common';

import { type ReflectHandler } from '../auth/authorizer';
import { isLongRunning, type RequestInfo } from '../endpoints/request-info';
import { type Serializers, writeError } from '../endpoints/responses/writers';
import { getRequestInfo, getUser } from '../filters/request-info';
import { FlowSchemaStore } from '../registry/flowcontrol/strategy';
import { type UserInfo } from '../registry/rest/rest';
import {
  createIfMissing,
  getOrUndefined,
  retryUntilDone,
  type StoreLookup,
  systemContext,
  updateIfNeeded,
} from '../server/bootstrap/objects';
import {
  AUTOUPDATE_SPEC_ANNOTATION,
  mandatoryFlowSchemas,
  mandatoryPriorityLevels,
  suggestedFlowSchemas,
  suggestedPriorityLevels,
} from './bootstrap-config';
import { byPrecedence, distinguisherOf, matchesFlowSchema } from './classifier';
import { type Clock, hashFlow, QueueSet, REAL_CLOCK, type RequestDescription } from './queue-set';

/** The response headers naming the flow schema and priority level a request was classified into (1.21's names). */
export const FLOW_SCHEMA_UID_HEADER = 'X-Kubernetes-PF-FlowSchema-UID';
export const PRIORITY_LEVEL_UID_HEADER = 'X-Kubernetes-PF-PriorityLevel-UID';
/** Where the debug tables are served. */
export const DEBUG_PREFIX = '/debug/api_priority_and_fairness/';

/** What the controller needs from the server. */
export interface PriorityAndFairnessDeps {
  /** The registry stores (flowschemas, prioritylevelconfigurations). */
  lookup: StoreLookup;
  /** Lists and watches a resource of the registry into `handler` until `signal` aborts; resolves once listed. */
  reflect(group: string, resource: string, handler: ReflectHandler, signal: AbortSignal): Promise<void>;
  /** `--max-requests-inflight` + `--max-mutating-requests-inflight`. */
  serverConcurrencyLimit: number;
  /** How long a request may wait in a queue (1.21: a quarter of `--request-timeout`), ms. */
  requestWaitLimitMs: number;
  metrics: MetricsRegistry;
  serializers: Serializers;
  log: Logger;
  now: () => number;
  clock?: Clock;
}

/** A priority level in use: its configuration and, when it is limited, its queues. */
interface Level {
  pl: PriorityLevelConfiguration;
  /** Undefined for an exempt level. */
  queues?: QueueSet;
}

const ANONYMOUS: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };
const DANGLING = 'Dangling';

const nameOf = (o: ApiObject): string => o.metadata?.name ?? '';

/** Object keys sorted, so that specs compare whatever order their fields were decoded in. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : x,
  );
}

/** The priority and fairness controller and filter of one API server. */
export class PriorityAndFairness {
  private readonly flowSchemas = new Map<string, FlowSchema>();
  private readonly priorityLevels = new Map<string, PriorityLevelConfiguration>();
  private sorted: FlowSchema[] = [];
  private readonly levels = new Map<string, Level>();
  private readonly clock: Clock;
  private synced = false;
  private readonly metrics: ReturnType<typeof registerMetrics>;
  private pendingRepair: NodeJS.Timeout | undefined;
  private signal: AbortSignal | undefined;

  constructor(private readonly d: PriorityAndFairnessDeps) {
    this.clock = d.clock ?? REAL_CLOCK;
    this.metrics = registerMetrics(d.metrics);
    // Until the registry is read, requests are classified by the bootstrap configuration.
    for (const pl of [...mandatoryPriorityLevels(), ...suggestedPriorityLevels()])
      this.priorityLevels.set(nameOf(pl), pl);
    for (const fs of [...mandatoryFlowSchemas(), ...suggestedFlowSchemas()]) this.flowSchemas.set(nameOf(fs), fs);
    this.reconfigure();
  }

  /** The post-start hook `priority-and-fairness-config-producer`: writes the bootstrap configuration. */
  async produce(signal: AbortSignal): Promise<void> {
    await retryUntilDone(
      () => this.ensureBootstrap(true),
      signal,
      1000,
      (err) => this.d.log.warn('Priority and fairness: writing the bootstrap configuration failed; retrying', { err }),
    );
  }

  /**
   * The post-start hook `priority-and-fairness-config-consumer`: follows the registry's configuration. Resolves
   * once both resources are listed; keeps following them until `signal` aborts.
   */
  async consume(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    const handler = (map: Map<string, ApiObject>): ReflectHandler => ({
      replace: (objects) => {
        map.clear();
        for (const o of objects) map.set(nameOf(o), o);
        this.onChange();
      },
      upsert: (o) => {
        map.set(nameOf(o), o);
        this.onChange();
      },
      remove: (o) => {
        map.delete(nameOf(o));
        this.onChange();
      },
    });
    await Promise.all([
      this.d.reflect(
        FLOWCONTROL_GROUP,
        'prioritylevelconfigurations',
        handler(this.priorityLevels as Map<string, ApiObject>),
        signal,
      ),
      this.d.reflect(FLOWCONTROL_GROUP, 'flowschemas', handler(this.flowSchemas as Map<string, ApiObject>), signal),
    ]);
    this.synced = true;
    this.onChange();
  }

  private onChange(): void {
    this.reconfigure();
    if (!this.synced) return;
    this.updateDanglingConditions();
    // A mandatory object deleted or changed is put back (batched: one pass for a burst of events).
    if (this.needsRepair() && !this.pendingRepair && !this.signal?.aborted) {
      this.pendingRepair = setTimeout(() => {
        this.pendingRepair = undefined;
        if (this.signal?.aborted) return;
        this.ensureBootstrap(false).catch((err: unknown) =>
          this.d.log.warn('Priority and fairness: could not restore the mandatory configuration', { err }),
        );
      }, 100).unref();
    }
  }

  private needsRepair(): boolean {
    const differs = (wanted: ApiObject & { spec?: unknown }, have: (ApiObject & { spec?: unknown }) | undefined) =>
      !have || canonical(have.spec) !== canonical(wanted.spec);
    return (
      mandatoryPriorityLevels().some((pl) => differs(pl, this.priorityLevels.get(nameOf(pl)))) ||
      mandatoryFlowSchemas().some((fs) => differs(fs, this.flowSchemas.get(nameOf(fs))))
    );
  }

  /**
   * Creates the missing bootstrap objects; puts back the spec of the mandatory ones, and of the suggested ones whose
   * autoupdate annotation is `"true"` (suggested objects only at start, so that a user's deletion sticks until then).
   */
  private async ensureBootstrap(withSuggested: boolean): Promise<void> {
    const ctx = systemContext('', this.d.now);
    const ensure = async (resource: string, objects: (ApiObject & { spec?: unknown })[], mandatory: boolean) => {
      const store = this.d.lookup(FLOWCONTROL_GROUP, resource);
      if (!store) return;
      for (const wanted of objects) {
        if (await createIfMissing(store, ctx, wanted)) continue;
        await updateIfNeeded(store, ctx, nameOf(wanted), (current) => {
          const c = current as ApiObject & { spec?: unknown };
          const annotation = c.metadata?.annotations?.[AUTOUPDATE_SPEC_ANNOTATION];
          const auto = mandatory || annotation === 'true' || (annotation === undefined && c.metadata?.generation === 1);
          if (!auto || (canonical(c.spec) === canonical(wanted.spec) && annotation === 'true')) return undefined;
          c.spec = structuredClone(wanted.spec);
          c.metadata = {
            ...c.metadata,
            annotations: { ...c.metadata?.annotations, [AUTOUPDATE_SPEC_ANNOTATION]: 'true' },
          };
          return c;
        });
      }
    };
    await ensure('prioritylevelconfigurations', mandatoryPriorityLevels(), true);
    await ensure('flowschemas', mandatoryFlowSchemas(), true);
    if (withSuggested) {
      await ensure('prioritylevelconfigurations', suggestedPriorityLevels(), false);
      await ensure('flowschemas', suggestedFlowSchemas(), false);
    }
  }

  /** Sets `Dangling` on every FlowSchema whose condition does not say whether its priority level exists. */
  private updateDanglingConditions(): void {
    const store = this.d.lookup(FLOWCONTROL_GROUP, 'flowschemas');
    if (!(store instanceof FlowSchemaStore)) return;
    for (const fs of this.flowSchemas.values()) {
      const plName = fs.spec?.priorityLevelConfiguration?.name ?? '';
      const dangling = !this.priorityLevels.has(plName);
      const status = dangling ? 'True' : 'False';
      const current = fs.status?.conditions?.find((c) => c.type === DANGLING);
      if (current?.status === status) continue;
      const condition: FlowSchemaCondition = {
        type: DANGLING,
        status,
        lastTransitionTime: new Date(this.d.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        reason: dangling ? 'NotFound' : 'Found',
        message: dangling
          ? `This FlowSchema references the PriorityLevelConfiguration object named "${plName}" but there is no such object`
          : `This FlowSchema references the PriorityLevelConfiguration object named "${plName}" and it exists`,
      };
      const ctx = systemContext('', this.d.now);
      updateIfNeeded(store.status, ctx, nameOf(fs), (c) => {
        const o = c as FlowSchema;
        const conditions = (o.status?.conditions ?? []).filter((x) => x.type !== DANGLING);
        if (o.status?.conditions?.find((x) => x.type === DANGLING)?.status === status) return undefined;
        o.status = { ...o.status, conditions: [...conditions, condition] };
        return o;
      }).catch((err: unknown) =>
        this.d.log.warn('Priority and fairness: could not write a FlowSchema condition', { name: nameOf(fs), err }),
      );
    }
  }

  /** Rebuilds the classification order and the levels from the current objects. */
  private reconfigure(): void {
    this.sorted = [...this.flowSchemas.values()]
      .filter((fs) => this.priorityLevels.has(fs.spec?.priorityLevelConfiguration?.name ?? ''))
      .sort(byPrecedence);
    let shares = 0;
    for (const pl of this.priorityLevels.values())
      if (pl.spec?.type === 'Limited') shares += pl.spec.limited?.assuredConcurrencyShares ?? 0;
    for (const [name, pl] of this.priorityLevels) {
      const level = this.levels.get(name);
      if (pl.spec?.type !== 'Limited') {
        this.levels.set(name, { pl });
        continue;
      }
      const limited = pl.spec.limited;
      const queuing = limited?.limitResponse?.type === 'Queue' ? limited.limitResponse.queuing : undefined;
      const acs = limited?.assuredConcurrencyShares ?? 0;
      const config = {
        name,
        concurrencyLimit: Math.max(1, Math.ceil((this.d.serverConcurrencyLimit * acs) / Math.max(1, shares))),
        queues: queuing?.queues ?? 0,
        handSize: queuing?.handSize ?? 0,
        queueLengthLimit: queuing?.queueLengthLimit ?? 0,
        requestWaitLimitMs: this.d.requestWaitLimitMs,
      };
      if (level?.queues) level.queues.setConfig(config);
      this.levels.set(name, { pl, queues: level?.queues ?? new QueueSet(config, this.clock) });
      this.metrics.concurrencyLimit.set({ priority_level: name }, config.concurrencyLimit);
    }
    // A level gone from the configuration is dropped; requests it still holds keep their queue set and drain.
    for (const name of [...this.levels.keys()]) if (!this.priorityLevels.has(name)) this.levels.delete(name);
  }

  /** The flow schema, distinguisher and level of a request. */
  classify(user: UserInfo, info: RequestInfo): { fs: FlowSchema; distinguisher: string; level: Level } | undefined {
    for (const fs of this.sorted) {
      if (!matchesFlowSchema(fs, user, info)) continue;
      const level = this.levels.get(fs.spec?.priorityLevelConfiguration?.name ?? '');
      if (level) return { fs, distinguisher: distinguisherOf(fs, user, info), level };
    }
    return undefined;
  }

  /**
   * The filter that replaces max-in-flight: classifies, sets the UID headers, then lets the request run, queues it
   * or answers 429. Long-running requests (watches) pass unclassified and are not counted, as in 1.21.
   */
  filter(): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
    return (req, res, next) => {
      const info = getRequestInfo(req);
      if (isLongRunning(info)) return next();
      const user = getUser(req) ?? ANONYMOUS;
      const c = this.classify(user, info);
      // Nothing matches only when the mandatory catch-all is gone for a moment: the request is not limited.
      if (!c) return next();
      const fsName = nameOf(c.fs);
      const plName = nameOf(c.level.pl);
      res.setHeader(FLOW_SCHEMA_UID_HEADER, c.fs.metadata?.uid ?? '');
      res.setHeader(PRIORITY_LEVEL_UID_HEADER, c.level.pl.metadata?.uid ?? '');
      const labels = { flow_schema: fsName, priority_level: plName };
      const queues = c.level.queues;
      if (!queues) {
        this.metrics.dispatched.inc(labels);
        return next();
      }
      const descr: RequestDescription = {
        flowSchema: fsName,
        distinguisher: c.distinguisher,
        user: user.name,
        verb: info.verb,
        path: info.path,
        namespace: info.namespace,
        name: info.name,
        apiVersion: info.apiVersion,
        resource: info.resource,
        subresource: info.subresource,
      };
      const gone = new AbortController();
      const onClose = (): void => gone.abort();
      res.once('close', onClose);
      this.metrics.inQueue.inc(labels);
      void queues.startRequest(hashFlow(fsName, c.distinguisher), descr, gone.signal).then((a) => {
        this.metrics.inQueue.dec(labels);
        res.removeListener('close', onClose);
        this.metrics.waitDuration.observe({ ...labels, execute: String(a.execute) }, a.waitedMs / 1000);
        if (!a.execute) {
          this.metrics.rejected.inc({ ...labels, reason: a.reason });
          if (!res.writableEnded && !res.destroyed)
            writeError(res, tooManyRequests('Too many requests, please try again later.', 1), this.d.serializers);
          return;
        }
        this.metrics.dispatched.inc(labels);
        this.metrics.executing.inc(labels);
        const started = this.clock.now();
        // 'close' follows 'finish' and comes alone when the client leaves first: one listener sees every end.
        const done = (): void => {
          a.finish();
          this.metrics.executing.dec(labels);
          this.metrics.executionSeconds.observe(labels, (this.clock.now() - started) / 1000);
        };
        if (res.destroyed) done();
        else res.once('close', done);
        next();
      });
    };
  }

  /** Serves `/debug/api_priority_and_fairness/dump_*`; false for any other path. */
  serveDebug(req: IncomingMessage, res: ServerResponse, path: string): boolean {
    if (!path.startsWith(DEBUG_PREFIX)) return false;
    const what = path.slice(DEBUG_PREFIX.length);
    const details = new URL(req.url ?? '/', 'http://x').searchParams.get('includeRequestDetails') === '1';
    let rows: (string | number | boolean)[][];
    if (what === 'dump_priority_levels') rows = this.priorityLevelRows();
    else if (what === 'dump_queues') rows = this.queueRows();
    else if (what === 'dump_requests') rows = this.requestRows(details);
    else return false;
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end(table(rows));
    return true;
  }

  private sortedLevels(): Level[] {
    return [...this.levels.values()].sort((a, b) => (nameOf(a.pl) < nameOf(b.pl) ? -1 : 1));
  }

  private priorityLevelRows(): (string | number | boolean)[][] {
    const rows: (string | number | boolean)[][] = [
      ['PriorityLevelName', 'ActiveQueues', 'IsIdle', 'IsQuiescing', 'WaitingRequests', 'ExecutingRequests'],
    ];
    for (const l of this.sortedLevels()) {
      if (!l.queues) continue;
      const dump = l.queues.dump();
      const active = dump.queues.filter((q) => q.waiting.length > 0).length;
      rows.push([nameOf(l.pl), active, l.queues.isIdle(), false, dump.waiting, dump.executing]);
    }
    return rows;
  }

  private queueRows(): (string | number | boolean)[][] {
    const rows: (string | number | boolean)[][] = [
      ['PriorityLevelName', 'Index', 'PendingRequests', 'ExecutingRequests', 'VirtualStart'],
    ];
    for (const l of this.sortedLevels()) {
      for (const q of l.queues?.dump().queues ?? [])
        rows.push([nameOf(l.pl), q.index, q.waiting.length, q.executing, q.virtualStart.toFixed(4)]);
    }
    return rows;
  }

  private requestRows(details: boolean): (string | number | boolean)[][] {
    const head = [
      'PriorityLevelName',
      'FlowSchemaName',
      'QueueIndex',
      'RequestIndexInQueue',
      'FlowDistingsher',
      'ArriveTime',
    ];
    const extra = ['UserName', 'Verb', 'APIPath', 'Namespace', 'Name', 'APIVersion', 'Resource', 'SubResource'];
    const rows: (string | number | boolean)[][] = [details ? [...head, ...extra] : head];
    for (const l of this.sortedLevels()) {
      for (const q of l.queues?.dump().queues ?? []) {
        q.waiting.forEach((w, i) => {
          const d = w.descr;
          const row = [nameOf(l.pl), d.flowSchema, q.index, i, d.distinguisher, new Date(w.arrivedAt).toISOString()];
          if (details)
            row.push(
              d.user ?? '',
              d.verb ?? '',
              d.path ?? '',
              d.namespace ?? '',
              d.name ?? '',
              d.apiVersion ?? '',
              d.resource ?? '',
              d.subresource ?? '',
            );
          rows.push(row);
        });
      }
    }
    return rows;
  }

  /** Whether the registry has been read (tests, readiness). */
  get isSynced(): boolean {
    return this.synced;
  }

  /** The FlowSchema a request would be classified into (tests, debugging). */
  flowSchemaFor(user: UserInfo, info: RequestInfo): string | undefined {
    const c = this.classify(user, info);
    return c && nameOf(c.fs);
  }

  /** Reads an object of the configuration from the registry (tests). */
  async read(resource: 'flowschemas' | 'prioritylevelconfigurations', name: string): Promise<ApiObject | undefined> {
    const store = this.d.lookup(FLOWCONTROL_GROUP, resource);
    return store && getOrUndefined(store, systemContext('', this.d.now), name);
  }
}

/** Columns separated by `,` and padded, as Kubernetes' tabwriter output of these dumps. */
function table(rows: (string | number | boolean)[][]): string {
  const cells = rows.map((r) => r.map(String));
  const widths: number[] = [];
  for (const r of cells) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length + 1)));
  return (
    cells
      .map((r) =>
        r
          .map((c, i) => (i < r.length - 1 ? `${c},`.padEnd((widths[i] ?? 0) + 1) : c))
          .join(' ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

function registerMetrics(m: MetricsRegistry) {
  const fsPl = ['flow_schema', 'priority_level'];
  return {
    rejected: m.counter({
      name: 'apiserver_flowcontrol_rejected_requests_total',
      help: 'Number of requests rejected by API Priority and Fairness system',
      labelNames: [...fsPl, 'reason'],
    }),
    dispatched: m.counter({
      name: 'apiserver_flowcontrol_dispatched_requests_total',
      help: 'Number of requests released by API Priority and Fairness system for service',
      labelNames: fsPl,
    }),
    inQueue: m.gauge({
      name: 'apiserver_flowcontrol_current_inqueue_requests',
      help: 'Number of requests currently pending in queues of the API Priority and Fairness system',
      labelNames: fsPl,
    }),
    executing: m.gauge({
      name: 'apiserver_flowcontrol_current_executing_requests',
      help: 'Number of requests currently executing in the API Priority and Fairness system',
      labelNames: fsPl,
    }),
    concurrencyLimit: m.gauge({
      name: 'apiserver_flowcontrol_request_concurrency_limit',
      help: 'Shared concurrency limit in the API Priority and Fairness system',
      labelNames: ['priority_level'],
    }),
    waitDuration: m.histogram({
      name: 'apiserver_flowcontrol_request_wait_duration_seconds',
      help: 'Length of time a request spent waiting in its queue',
      labelNames: [...fsPl, 'execute'],
      buckets: [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30],
    }),
    executionSeconds: m.histogram({
      name: 'apiserver_flowcontrol_request_execution_seconds',
      help: 'Duration of request execution in the API Priority and Fairness system',
      labelNames: fsPl,
      buckets: [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30],
    }),
  };
}
