/**
 * The ReplicaSet controller, which also serves ReplicationControllers (model: `pkg/controller/replicaset/
 * replica_set.go`, `replica_set_utils.go`; `pkg/controller/replication` runs the same code on the core kind).
 *
 * One sync of `namespace/name`: claim the pods (adopt orphans the selector matches, release owned ones it no longer
 * matches); when the previous sync's creations and deletions have all been observed by the pod informer (the
 * expectations), create the missing pods in slow-start batches (1, 2, 4, …, at most `burstReplicas` per sync) or
 * delete the surplus, least valuable first (1.21's ranking); then write `status` when it changed. Pods are Events
 * of the controller object: `SuccessfulCreate` "Created pod: x", `SuccessfulDelete` "Deleted pod: x",
 * `FailedCreate`/`FailedDelete` "Error creating: …".
 */
import {
  type ApiObject,
  isConflict,
  isForbidden,
  isNotFound,
  type Kind,
  labelSelectorAsSelector,
  type LabelSelector,
  type Pod,
  PodKind,
  type PodTemplateSpec,
  type Selector,
  selectorFromSet,
  nothing,
} from '@platform/api';
import {
  metaNamespaceKey,
  NAMESPACE_INDEX,
  runWorkers,
  type ResourceClient,
  type SharedIndexInformer,
  splitMetaNamespaceKey,
  WorkQueue,
} from '@platform/client';

import { type ControllerContext } from '../../controller';
import { claim } from '../util/claim';
import { ControllerExpectations } from '../util/expectations';
import { CONTROLLER_UID_INDEX, controllerUidIndexFunc, ensureIndex, unwrapTombstone } from '../util/informers';
import {
  getControllerOf,
  isPodActive,
  isPodAvailable,
  isPodReady,
  msUntilAvailable,
  newControllerRef,
  podFromTemplate,
  rankPodsForDeletion,
  slowStartBatch,
} from '../util/pods';

/** At most this many pods are created or deleted by one sync (Kubernetes' `BurstReplicas`). */
export const BURST_REPLICAS = 500;

/** The fields of a ReplicaSet or ReplicationController this controller reads and writes. */
export interface ReplicatedObject extends ApiObject {
  spec?: {
    replicas?: number;
    minReadySeconds?: number;
    selector?: LabelSelector | Record<string, string>;
    template?: PodTemplateSpec;
  };
  status?: ReplicatedStatus;
}

/** The status both kinds share. */
export interface ReplicatedStatus {
  replicas: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  observedGeneration?: number;
  conditions?: {
    type: string;
    status: 'True' | 'False' | 'Unknown';
    lastTransitionTime?: string;
    reason?: string;
    message?: string;
  }[];
}

/** What differs between the two kinds. */
export interface ReplicatedKind {
  /** The controller's name (`replicaset`, `replicationcontroller`) for queues and logs. */
  name: string;
  kind: Kind;
  /** The pods the object selects. */
  selector(obj: ReplicatedObject): Selector;
}

/** ReplicaSets: `spec.selector` is a LabelSelector. */
export function replicaSetSelector(obj: ReplicatedObject): Selector {
  return labelSelectorAsSelector(obj.spec?.selector as LabelSelector | undefined);
}

/** ReplicationControllers: `spec.selector` is a label map (empty selects nothing here, as validation forbids it). */
export function replicationControllerSelector(obj: ReplicatedObject): Selector {
  const s = obj.spec?.selector as Record<string, string> | undefined;
  return s && Object.keys(s).length > 0 ? selectorFromSet(s) : nothing();
}

/** Runs the controller until `ctx.signal` aborts. */
export async function runReplicatedController(
  ctx: ControllerContext,
  k: ReplicatedKind,
  workers: number,
  burstReplicas = BURST_REPLICAS,
): Promise<void> {
  const c = new ReplicatedController(ctx, k, burstReplicas);
  await c.run(workers);
}

class ReplicatedController {
  private readonly owners: SharedIndexInformer<ReplicatedObject>;
  private readonly pods: SharedIndexInformer<Pod>;
  private readonly queue: WorkQueue<string>;
  private readonly expectations = new ControllerExpectations();
  private readonly client: ResourceClient<ReplicatedObject>;
  private readonly podClient: ResourceClient<Pod>;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly k: ReplicatedKind,
    private readonly burst: number,
  ) {
    this.owners = ctx.informers.informerFor(k.kind) as unknown as SharedIndexInformer<ReplicatedObject>;
    this.pods = ctx.informers.informerFor(PodKind) as unknown as SharedIndexInformer<Pod>;
    ensureIndex(this.pods, CONTROLLER_UID_INDEX, controllerUidIndexFunc);
    this.client = ctx.client.resource(k.kind) as unknown as ResourceClient<ReplicatedObject>;
    this.podClient = ctx.client.resource(PodKind) as unknown as ResourceClient<Pod>;
    this.queue = new WorkQueue<string>({ name: k.name, metrics: ctx.metrics });

    this.owners.addEventHandler({
      onAdd: (o) => this.enqueue(o),
      onUpdate: (_old, o) => this.enqueue(o),
      onDelete: (d) => {
        const o = unwrapTombstone(d);
        const key = metaNamespaceKey(o);
        this.expectations.delete(key);
        this.queue.add(key);
      },
    });
    this.pods.addEventHandler({
      onAdd: (p) => this.addPod(p),
      onUpdate: (oldP, p) => this.updatePod(oldP, p),
      onDelete: (d) => this.deletePod(unwrapTombstone(d)),
    });
  }

  private enqueue(o: ApiObject): void {
    this.queue.add(metaNamespaceKey(o));
  }

  /** The owner `ref` names, if it is one of ours and the UID matches. */
  private resolve(
    ns: string,
    ref: { kind: string; name: string; uid: string } | undefined,
  ): ReplicatedObject | undefined {
    if (!ref || ref.kind !== this.k.kind.kind) return undefined;
    const o = this.owners.indexer.get(`${ns}/${ref.name}`);
    return o?.metadata?.uid === ref.uid ? o : undefined;
  }

  /** The controllers whose selector matches an orphan pod. */
  private matching(p: Pod): ReplicatedObject[] {
    return this.owners.indexer
      .byIndex(NAMESPACE_INDEX, p.metadata?.namespace ?? '')
      .filter((o) => this.k.selector(o).matches(p.metadata?.labels));
  }

  private addPod(p: Pod): void {
    if (p.metadata?.deletionTimestamp) return this.deletePod(p);
    const ref = getControllerOf(p);
    if (ref) {
      const owner = this.resolve(p.metadata?.namespace ?? '', ref);
      if (!owner) return;
      const key = metaNamespaceKey(owner);
      this.expectations.creationObserved(key);
      this.queue.add(key);
      return;
    }
    for (const o of this.matching(p)) this.enqueue(o);
  }

  private updatePod(oldP: Pod, p: Pod): void {
    if (oldP.metadata?.resourceVersion === p.metadata?.resourceVersion) return; // resync
    const labelsChanged = JSON.stringify(oldP.metadata?.labels ?? {}) !== JSON.stringify(p.metadata?.labels ?? {});
    if (p.metadata?.deletionTimestamp) {
      // Being deleted counts as deleted: the controller makes a replacement at once instead of waiting.
      this.deletePod(p);
      if (labelsChanged) this.deletePod(oldP);
      return;
    }
    const ns = p.metadata?.namespace ?? '';
    const oldRef = getControllerOf(oldP);
    const ref = getControllerOf(p);
    const refChanged = oldRef?.uid !== ref?.uid;
    if (refChanged && oldRef) {
      const old = this.resolve(ns, oldRef);
      if (old) this.enqueue(old);
    }
    if (ref) {
      const owner = this.resolve(ns, ref);
      if (!owner) return;
      this.enqueue(owner);
      const minReady = owner.spec?.minReadySeconds ?? 0;
      if (!isPodReady(oldP) && isPodReady(p) && minReady > 0)
        this.queue.addAfter(metaNamespaceKey(owner), minReady * 1000 + 1000);
      return;
    }
    if (labelsChanged || refChanged) for (const o of this.matching(p)) this.enqueue(o);
  }

  private deletePod(p: Pod): void {
    const owner = this.resolve(p.metadata?.namespace ?? '', getControllerOf(p));
    if (!owner) return;
    const key = metaNamespaceKey(owner);
    this.expectations.deletionObserved(key, metaNamespaceKey(p));
    this.queue.add(key);
  }

  async run(workers: number): Promise<void> {
    const { signal } = this.ctx;
    signal.addEventListener('abort', () => this.queue.shutDown(), { once: true });
    void this.queue.updateMetricsUntil(signal);
    if (!(await this.ctx.informers.waitForCacheSync(signal))) return;
    await runWorkers(
      this.queue,
      workers,
      (key) => this.sync(key),
      (key, err) => {
        if (!signal.aborted) this.ctx.logger.info('Sync failed; requeued', { key, error: String(err) });
      },
    );
  }

  /** One level-triggered sync of `key`. */
  async sync(key: string): Promise<void> {
    const { namespace } = splitMetaNamespaceKey(key);
    const cached = this.owners.indexer.get(key);
    if (!cached) {
      this.expectations.delete(key);
      return;
    }
    const selector = this.k.selector(cached);
    const needsSync = this.expectations.satisfied(key);
    const active = this.pods.indexer.byIndex(NAMESPACE_INDEX, namespace).filter(isPodActive);
    const ref = newControllerRef(cached, this.k.kind.apiVersion, this.k.kind.kind);
    const pods = await claim(
      {
        owner: cached,
        selector,
        ref,
        getFresh: () => this.client.namespace(namespace).get(cached.metadata?.name ?? '', { signal: this.ctx.signal }),
      },
      active,
      this.podClient,
      this.ctx.signal,
    );
    let manageError: unknown;
    if (needsSync && !cached.metadata?.deletionTimestamp) {
      try {
        await this.manage(key, cached, pods, ref);
      } catch (err) {
        manageError = err;
      }
    }
    const now = Date.now();
    const status = this.calculateStatus(cached, pods, manageError, now);
    const updated = await this.updateStatus(cached, status);
    const minReady = cached.spec?.minReadySeconds ?? 0;
    if (
      manageError === undefined &&
      minReady > 0 &&
      updated.readyReplicas === (cached.spec?.replicas ?? 1) &&
      updated.availableReplicas !== (cached.spec?.replicas ?? 1)
    ) {
      const wait = Math.max(...pods.map((p) => msUntilAvailable(p, minReady, now)), 0);
      this.queue.addAfter(key, wait + 1000);
    }
    if (manageError !== undefined) throw manageError;
  }

  private async manage(
    key: string,
    rs: ReplicatedObject,
    pods: Pod[],
    ref: ReturnType<typeof newControllerRef>,
  ): Promise<void> {
    const want = rs.spec?.replicas ?? 1;
    const diff = pods.length - want;
    const ns = rs.metadata?.namespace ?? '';
    const rec = this.ctx.recorder;
    // Listed objects carry no kind; the Event's involvedObject needs it.
    rs = { ...rs, apiVersion: this.k.kind.apiVersion, kind: this.k.kind.kind };
    if (diff < 0) {
      const n = Math.min(-diff, this.burst);
      this.expectations.expectCreations(key, n);
      const podClient = this.podClient.namespace(ns);
      const r = await slowStartBatch(n, 1, async () => {
        const pod = podFromTemplate(rs.spec?.template, ns, rs, ref);
        try {
          const created = await podClient.create(pod, { signal: this.ctx.signal });
          rec.event(rs, 'Normal', 'SuccessfulCreate', `Created pod: ${created.metadata?.name ?? ''}`);
        } catch (err) {
          // A terminating namespace refuses new pods: not a failure of the controller.
          if (isForbidden(err) && /terminat/i.test(String((err as Error).message))) return;
          rec.event(rs, 'Warning', 'FailedCreate', `Error creating: ${(err as Error).message}`);
          throw err;
        }
      });
      // Creations that were not attempted or failed will never be observed.
      for (let i = r.successes; i < n; i++) this.expectations.creationObserved(key);
      if (r.error !== undefined) throw r.error;
      return;
    }
    if (diff > 0) {
      const n = Math.min(diff, this.burst);
      const related = this.relatedPods(rs, pods);
      const victims = n < pods.length ? rankPodsForDeletion(pods, related).slice(0, n) : pods.slice(0, n);
      this.expectations.expectDeletions(
        key,
        victims.map((p) => metaNamespaceKey(p)),
      );
      const podClient = this.podClient.namespace(ns);
      const results = await Promise.allSettled(
        victims.map(async (p) => {
          try {
            await podClient.delete(p.metadata?.name ?? '', { signal: this.ctx.signal });
            rec.event(rs, 'Normal', 'SuccessfulDelete', `Deleted pod: ${p.metadata?.name ?? ''}`);
          } catch (err) {
            this.expectations.deletionObserved(key, metaNamespaceKey(p));
            if (isNotFound(err)) return;
            rec.event(rs, 'Warning', 'FailedDelete', `Error deleting: ${(err as Error).message}`);
            throw err;
          }
        }),
      );
      const failed = results.find((x): x is PromiseRejectedResult => x.status === 'rejected');
      if (failed) throw failed.reason;
    }
  }

  /** The active pods of every controller that shares this one's owner (the other ReplicaSets of its Deployment). */
  private relatedPods(rs: ReplicatedObject, own: Pod[]): Pod[] {
    const owner = getControllerOf(rs);
    if (!owner) return own;
    const siblings = this.owners.indexer
      .byIndex(NAMESPACE_INDEX, rs.metadata?.namespace ?? '')
      .filter((o) => getControllerOf(o)?.uid === owner.uid);
    const out: Pod[] = [];
    for (const s of siblings)
      out.push(...this.pods.indexer.byIndex(CONTROLLER_UID_INDEX, s.metadata?.uid ?? '').filter(isPodActive));
    return out;
  }

  private calculateStatus(rs: ReplicatedObject, pods: Pod[], manageError: unknown, now: number): ReplicatedStatus {
    const templateLabels = rs.spec?.template?.metadata?.labels ?? {};
    const minReady = rs.spec?.minReadySeconds ?? 0;
    let fullyLabeled = 0;
    let ready = 0;
    let available = 0;
    for (const p of pods) {
      const labels = p.metadata?.labels ?? {};
      if (Object.entries(templateLabels).every(([k, v]) => labels[k] === v)) fullyLabeled++;
      if (isPodReady(p)) {
        ready++;
        if (isPodAvailable(p, minReady, now)) available++;
      }
    }
    let conditions = (rs.status?.conditions ?? []).map((c) => ({ ...c }));
    const failure = conditions.find((c) => c.type === 'ReplicaFailure');
    if (manageError !== undefined && !failure) {
      const want = rs.spec?.replicas ?? 1;
      const reason = pods.length < want ? 'FailedCreate' : 'FailedDelete';
      conditions.push({
        type: 'ReplicaFailure',
        status: 'True',
        lastTransitionTime: new Date(now).toISOString().replace(/\.\d+Z$/, 'Z'),
        reason,
        message: String((manageError as Error).message ?? manageError),
      });
    } else if (manageError === undefined && failure) {
      conditions = conditions.filter((c) => c.type !== 'ReplicaFailure');
    }
    return {
      replicas: pods.length,
      fullyLabeledReplicas: fullyLabeled,
      readyReplicas: ready,
      availableReplicas: available,
      observedGeneration: rs.metadata?.generation,
      ...(conditions.length ? { conditions } : {}),
    };
  }

  /** Writes `status` when it differs from the object's; one fresh read and retry on a conflict. */
  private async updateStatus(rs: ReplicatedObject, status: ReplicatedStatus): Promise<ReplicatedStatus> {
    const same = (cur: ReplicatedObject): boolean => {
      const s = cur.status;
      return (
        (s?.replicas ?? 0) === status.replicas &&
        (s?.fullyLabeledReplicas ?? 0) === status.fullyLabeledReplicas &&
        (s?.readyReplicas ?? 0) === status.readyReplicas &&
        (s?.availableReplicas ?? 0) === status.availableReplicas &&
        s?.observedGeneration === status.observedGeneration &&
        JSON.stringify(s?.conditions ?? []) === JSON.stringify(status.conditions ?? [])
      );
    };
    let cur = rs;
    const client = this.client.namespace(rs.metadata?.namespace ?? '');
    for (let attempt = 0; ; attempt++) {
      if (same(cur)) return status;
      const next = { ...structuredClone(cur), status };
      try {
        await client.updateStatus(next, { signal: this.ctx.signal });
        return status;
      } catch (err) {
        if (isNotFound(err)) return status;
        if (!isConflict(err) || attempt >= 1) throw err;
      }
      cur = await client.get(rs.metadata?.name ?? '', { signal: this.ctx.signal });
    }
  }
}
