/**
 * The daemonset controller (model: Kubernetes 1.21 `pkg/controller/daemon/daemon_controller.go`, `update.go`,
 * `util/daemonset_util.go`): one pod of a DaemonSet on every node that should run it. A node should run it when
 * the template's `nodeName` (if any) is the node, the node matches `nodeSelector` and the required node affinity,
 * and every NoSchedule/NoExecute taint of the node is tolerated; a pod already there keeps running unless a
 * NoExecute taint is not tolerated or the node no longer matches. As with ScheduleDaemonSetPods (GA in 1.21), the
 * controller does not bind pods: each pod gets a required node affinity on `metadata.name` of its node and the
 * default scheduler places it; daemon pods also get the tolerations of 1.21 (not-ready, unreachable, the
 * pressure and unschedulable taints).
 *
 * Each template version is a ControllerRevision; pods carry its hash in `controller-revision-hash`.
 * RollingUpdate deletes old pods (unavailable ones first) while at most `maxUnavailable` nodes lack an
 * available daemon pod, and the sync creates the new ones; OnDelete leaves old pods until they are deleted.
 */
import {
  type ApiObject,
  ControllerRevisionKind,
  type DaemonSet,
  DaemonSetKind,
  isConflict,
  isNotFound,
  type Kind,
  labelSelectorAsSelector,
  matchesNodeSelectorMap,
  matchNodeSelector,
  type Node,
  NodeKind,
  type Pod,
  PodKind,
  type Selector,
  type Taint,
  type Toleration,
} from '@platform/api';
import {
  isDeletedFinalStateUnknown,
  metaNamespaceKey,
  NAMESPACE_INDEX,
  type ResourceClient,
  WorkQueue,
} from '@platform/client';
import { type FlagDef } from '@platform/common';

import { type ControllerContext, type ControllerDefinition, ControllerOptions } from '../../controller';
import { CONTROLLER_REVISION_HASH_LABEL, ensureRevision, truncateHistory } from '../workload-util/history';
import {
  claimObjects,
  controllerRefOf,
  errorText,
  Expectations,
  isPodAvailable,
  isPodReady,
  newControllerRef,
  ownerStillExists,
  podFromTemplate,
  runWorkerLoop,
  slowStartBatch,
} from '../workload-util/workload-util';

/** What the daemonset controller runs with. */
export interface DaemonSetControllerConfig {
  /** Workers (`ConcurrentDaemonSetSyncs`, 2; 1.21 has no flag for it). */
  concurrentDaemonSetSyncs: number;
  /** The clock (availability after `minReadySeconds`). */
  now: () => number;
}

/** The daemonset controller's option family: no flag in 1.21 (`ConcurrentDaemonSetSyncs` is 2). */
export class DaemonSetControllerOptions extends ControllerOptions<DaemonSetControllerConfig> {
  constructor() {
    super('DaemonSet controller');
  }

  protected flagDefs(): FlagDef[] {
    return [];
  }

  values(): DaemonSetControllerConfig {
    return { concurrentDaemonSetSyncs: 2, now: Date.now };
  }
}

/** The label of a daemon pod's template hash. */
export const DAEMONSET_HASH_LABEL = 'controller-revision-hash';
/** The label of a daemon pod's template generation (deprecated in 1.21, still written). */
export const TEMPLATE_GENERATION_LABEL = 'pod-template-generation';

const DS_KIND = DaemonSetKind as unknown as Kind;
const BURST_REPLICAS = 250;

/** The tolerations every daemon pod gets (`AddOrUpdateDaemonPodTolerations`). */
export function daemonPodTolerations(hostNetwork: boolean): Toleration[] {
  const t = (key: string, effect: 'NoSchedule' | 'NoExecute'): Toleration => ({ key, operator: 'Exists', effect });
  return [
    t('node.kubernetes.io/not-ready', 'NoExecute'),
    t('node.kubernetes.io/unreachable', 'NoExecute'),
    t('node.kubernetes.io/disk-pressure', 'NoSchedule'),
    t('node.kubernetes.io/memory-pressure', 'NoSchedule'),
    t('node.kubernetes.io/pid-pressure', 'NoSchedule'),
    t('node.kubernetes.io/unschedulable', 'NoSchedule'),
    ...(hostNetwork ? [t('node.kubernetes.io/network-unavailable', 'NoSchedule')] : []),
  ];
}

function tolerates(tol: Toleration, taint: Taint): boolean {
  if (tol.effect && tol.effect !== taint.effect) return false;
  if (tol.key && tol.key !== taint.key) return false;
  if (!tol.key && tol.operator !== 'Exists') return false;
  if (tol.operator === 'Exists') return true;
  return (tol.value ?? '') === (taint.value ?? '');
}

function untolerated(taints: Taint[], tols: Toleration[], effects: string[]): boolean {
  return taints.some((t) => effects.includes(t.effect) && !tols.some((tol) => tolerates(tol, t)));
}

/** Whether `node` should run the daemon pod, and whether a pod there may keep running (`nodeShouldRunDaemonPod`). */
export function nodeShouldRunDaemonPod(node: Node, ds: DaemonSet): { shouldRun: boolean; shouldContinue: boolean } {
  const spec = ds.spec?.template?.spec;
  const name = node.metadata?.name ?? '';
  if (spec?.nodeName && spec.nodeName !== name) return { shouldRun: false, shouldContinue: false };
  const labels = node.metadata?.labels ?? {};
  const nodeLike = { metadata: { name, labels } };
  const required = spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!matchesNodeSelectorMap(spec?.nodeSelector, labels) || (required && !matchNodeSelector(required, nodeLike))) {
    return { shouldRun: false, shouldContinue: false };
  }
  const taints = node.spec?.taints ?? [];
  const tols = [...(spec?.tolerations ?? []), ...daemonPodTolerations(spec?.hostNetwork === true)];
  if (untolerated(taints, tols, ['NoSchedule', 'NoExecute'])) {
    return { shouldRun: false, shouldContinue: !untolerated(taints, tols, ['NoExecute']) };
  }
  return { shouldRun: true, shouldContinue: true };
}

/** The node a daemon pod is for: its `nodeName`, else the `metadata.name` of its required node affinity. */
export function targetNodeName(pod: Pod): string | undefined {
  if (pod.spec?.nodeName) return pod.spec.nodeName;
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  for (const term of terms ?? []) {
    for (const f of term.matchFields ?? []) {
      if (f.key === 'metadata.name' && f.operator === 'In' && f.values?.length === 1) return f.values[0];
    }
  }
  return undefined;
}

/**
 * Pins a pod to a node through its required node affinity (`ReplaceDaemonSetPodNodeNameNodeAffinity`): every
 * term's field requirements become `metadata.name In [node]`, its label requirements stay.
 */
export function pinToNode(pod: Pod, nodeName: string): void {
  const spec = (pod.spec ??= { containers: [] });
  const affinity = (spec.affinity ??= {});
  const nodeAffinity = (affinity.nodeAffinity ??= {});
  const field = { key: 'metadata.name', operator: 'In' as const, values: [nodeName] };
  const terms = nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = {
    nodeSelectorTerms:
      terms.length === 0
        ? [{ matchFields: [field] }]
        : terms.map((t) => ({
            ...(t.matchExpressions ? { matchExpressions: t.matchExpressions } : {}),
            matchFields: [field],
          })),
  };
}

function isTerminating(p: Pod): boolean {
  return !!p.metadata?.deletionTimestamp;
}

function created(p: Pod): number {
  return Date.parse(p.metadata?.creationTimestamp ?? '') || 0;
}

/** Percent or count of an IntOrString against `total`, rounding up (`GetScaledValueFromIntOrPercent`). */
export function scaledValue(v: number | string | undefined | null, total: number, fallback: number): number {
  if (v === undefined || v === null) return fallback;
  if (typeof v === 'number') return v;
  const m = /^([0-9]+)%$/.exec(v);
  if (m) return Math.ceil((Number(m[1]) * total) / 100);
  const n = Number(v);
  return Number.isInteger(n) ? n : fallback;
}

/** One running daemonset controller. */
class DaemonSetController {
  private readonly sets;
  private readonly pods;
  private readonly nodes;
  private readonly revisions;
  private readonly queue: WorkQueue<string>;
  private readonly expectations: Expectations;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly cfg: DaemonSetControllerConfig,
  ) {
    this.sets = ctx.informers.informerFor(DaemonSetKind);
    this.pods = ctx.informers.informerFor(PodKind);
    this.nodes = ctx.informers.informerFor(NodeKind);
    this.revisions = ctx.informers.informerFor(ControllerRevisionKind);
    this.queue = new WorkQueue<string>({ name: 'daemonset', metrics: ctx.metrics });
    this.expectations = new Expectations(cfg.now);
    const enqueue = (s: ApiObject) => this.queue.add(metaNamespaceKey(s));
    this.sets.addEventHandler({
      onAdd: enqueue,
      onUpdate: (_old, cur) => enqueue(cur),
      onDelete: (s) => {
        const ds = isDeletedFinalStateUnknown(s) ? s.obj : s;
        this.expectations.delete(metaNamespaceKey(ds));
        enqueue(ds);
      },
    });
    this.pods.addEventHandler({
      onAdd: (p) => {
        if (isTerminating(p)) return this.podGone(p);
        const ds = this.setOf(p);
        if (ds) {
          this.expectations.creationObserved(metaNamespaceKey(ds));
          return enqueue(ds);
        }
        if (!controllerRefOf(p)) for (const s of this.setsMatching(p)) enqueue(s);
      },
      onUpdate: (old, cur) => {
        if (old.metadata?.resourceVersion === cur.metadata?.resourceVersion) return;
        if (isTerminating(cur) && !isTerminating(old)) return this.podGone(cur);
        const oldDs = this.setOf(old);
        const ds = this.setOf(cur);
        if (oldDs && oldDs.metadata?.uid !== ds?.metadata?.uid) enqueue(oldDs);
        if (ds) return enqueue(ds);
        if (!controllerRefOf(cur)) for (const s of this.setsMatching(cur)) enqueue(s);
      },
      onDelete: (p) => this.podGone(isDeletedFinalStateUnknown(p) ? p.obj : p),
    });
    const allSets = () => {
      for (const s of this.sets.indexer.list()) enqueue(s);
    };
    this.nodes.addEventHandler({
      onAdd: allSets,
      onUpdate: (old, cur) => {
        if (old.metadata?.resourceVersion !== cur.metadata?.resourceVersion) allSets();
      },
      onDelete: allSets,
    });
  }

  async run(): Promise<void> {
    await runWorkerLoop(
      this.ctx,
      this.queue,
      this.cfg.concurrentDaemonSetSyncs,
      () => this.sets.hasSynced() && this.pods.hasSynced() && this.nodes.hasSynced() && this.revisions.hasSynced(),
      (key) => this.sync(key),
    );
  }

  private setOf(p: Pod): DaemonSet | undefined {
    const ref = controllerRefOf(p);
    if (!ref || ref.kind !== 'DaemonSet') return undefined;
    const ds = this.sets.indexer.get(`${p.metadata?.namespace}/${ref.name}`);
    return ds?.metadata?.uid === ref.uid ? ds : undefined;
  }

  private setsMatching(p: Pod): DaemonSet[] {
    return this.sets.indexer.byIndex(NAMESPACE_INDEX, p.metadata?.namespace ?? '').filter((s) => {
      try {
        return labelSelectorAsSelector(s.spec?.selector).matches(p.metadata?.labels ?? {});
      } catch {
        return false;
      }
    });
  }

  private podGone(p: Pod): void {
    const ds = this.setOf(p);
    if (!ds) return;
    const key = metaNamespaceKey(ds);
    this.expectations.deletionObserved(key, metaNamespaceKey(p));
    this.queue.add(key);
  }

  private podClient(ns: string): ResourceClient<Pod & ApiObject> {
    return this.ctx.client.resource(PodKind, ns);
  }

  private async sync(key: string): Promise<void> {
    const cached = this.sets.indexer.get(key);
    if (!cached) {
      this.expectations.delete(key);
      return;
    }
    const ds: DaemonSet = { ...structuredClone(cached), apiVersion: 'apps/v1', kind: 'DaemonSet' };
    const ns = ds.metadata?.namespace ?? '';
    let selector: Selector;
    try {
      selector = labelSelectorAsSelector(ds.spec?.selector);
    } catch {
      return;
    }
    if (selector.isEmpty()) {
      this.ctx.recorder.event(
        ds,
        'Warning',
        'SelectingAll',
        'This daemon set is selecting all pods. A non-empty selector is required.',
      );
      return;
    }
    const canAdopt = ownerStillExists(this.ctx.client.resource(DaemonSetKind, ns) as unknown as ResourceClient, ds);
    const revClient = this.ctx.client.resource(ControllerRevisionKind, ns);
    const ownedRevisions = await claimObjects(
      revClient,
      ds,
      DS_KIND,
      (r) => selector.matches(r.metadata?.labels ?? {}),
      this.revisions.indexer.byIndex(NAMESPACE_INDEX, ns),
      canAdopt,
    );
    const pods = await claimObjects(
      this.podClient(ns),
      ds,
      DS_KIND,
      (p) => selector.matches(p.metadata?.labels ?? {}),
      this.pods.indexer.byIndex(NAMESPACE_INDEX, ns),
      canAdopt,
    );
    const template = { ...structuredClone(ds.spec?.template ?? {}), $patch: 'replace' };
    const { update, revisions, collisionCount } = await ensureRevision(
      revClient,
      ds,
      DS_KIND,
      ds.spec?.template?.metadata?.labels,
      { spec: { template } },
      ownedRevisions,
      ds.status?.collisionCount ?? 0,
    );
    const hash = update.metadata?.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '';
    const nodes = this.nodes.indexer.list();
    const byNode = new Map<string, Pod[]>();
    for (const p of pods) {
      const n = targetNodeName(p);
      if (n === undefined) continue;
      byNode.set(n, [...(byNode.get(n) ?? []), p]);
    }

    if (!ds.metadata?.deletionTimestamp && this.expectations.satisfied(key)) {
      await this.manage(ds, key, nodes, byNode, hash);
      if ((ds.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate' && this.expectations.satisfied(key)) {
        await this.rollingUpdate(ds, key, nodes, byNode, hash);
      }
    }
    const live = new Set(
      pods.map((p) => {
        const h = p.metadata?.labels?.[DAEMONSET_HASH_LABEL];
        return revisions.find((r) => r.metadata?.labels?.[CONTROLLER_REVISION_HASH_LABEL] === h)?.metadata?.name ?? '';
      }),
    );
    live.add(update.metadata?.name ?? '');
    await truncateHistory(revClient, revisions, live, ds.spec?.revisionHistoryLimit ?? 10);
    await this.updateStatus(ds, nodes, byNode, hash, collisionCount);
  }

  /** Creates pods on nodes that lack one and deletes pods that should not run (`manage`). */
  private async manage(ds: DaemonSet, key: string, nodes: Node[], byNode: Map<string, Pod[]>, hash: string) {
    const toCreate: string[] = [];
    const toDelete: Pod[] = [];
    for (const node of nodes) {
      const name = node.metadata?.name ?? '';
      const { shouldRun, shouldContinue } = nodeShouldRunDaemonPod(node, ds);
      const here = byNode.get(name) ?? [];
      if (shouldRun && here.length === 0) {
        toCreate.push(name);
      } else if (shouldContinue) {
        const running: Pod[] = [];
        for (const p of here) {
          if (isTerminating(p)) continue;
          if (p.status?.phase === 'Failed') {
            this.ctx.recorder.event(
              ds,
              'Warning',
              'FailedDaemonPod',
              `Found failed daemon pod ${p.metadata?.namespace}/${p.metadata?.name} on node ${name}, will try to kill it`,
            );
            toDelete.push(p);
          } else running.push(p);
        }
        // More than one daemon pod on a node: keep the oldest.
        if (running.length > 1) {
          running.sort((a, b) => created(a) - created(b));
          toDelete.push(...running.slice(1));
        }
      } else {
        toDelete.push(...here.filter((p) => !isTerminating(p)));
      }
    }
    await this.syncNodes(ds, key, toDelete, toCreate, hash);
  }

  /** Deletes `toDelete` and creates a pod on each node of `toCreate`, under expectations (`syncNodes`). */
  private async syncNodes(ds: DaemonSet, key: string, toDelete: Pod[], toCreateAll: string[], hash: string) {
    const toCreate = toCreateAll.slice(0, BURST_REPLICAS);
    const del = toDelete.slice(0, BURST_REPLICAS);
    if (toCreate.length === 0 && del.length === 0) return;
    const ns = ds.metadata?.namespace ?? '';
    const client = this.podClient(ns);
    this.expectations.expect(key, toCreate.length, del.map(metaNamespaceKey));
    const errors: unknown[] = [];
    const { successes, error } = await slowStartBatch(toCreate.length, 1, async (i) => {
      const nodeName = toCreate[i] as string;
      const pod = podFromTemplate(ds.spec?.template, ds, newControllerRef(ds, DS_KIND));
      pod.metadata = {
        ...pod.metadata,
        labels: {
          ...pod.metadata?.labels,
          [DAEMONSET_HASH_LABEL]: hash,
          [TEMPLATE_GENERATION_LABEL]: String(ds.metadata?.generation ?? 1),
        },
      };
      pinToNode(pod, nodeName);
      const spec = pod.spec as NonNullable<Pod['spec']>;
      const have = spec.tolerations ?? [];
      spec.tolerations = [
        ...have,
        ...daemonPodTolerations(spec.hostNetwork === true).filter(
          (t) => !have.some((x) => x.key === t.key && x.effect === t.effect),
        ),
      ];
      try {
        const made = await client.create(pod);
        this.ctx.recorder.event(ds, 'Normal', 'SuccessfulCreate', `Created pod: ${made.metadata?.name}`);
      } catch (err) {
        this.expectations.creationObserved(key);
        this.ctx.recorder.event(ds, 'Warning', 'FailedCreate', `Error creating: ${errorText(err)}`);
        throw err;
      }
    });
    for (let i = successes + (error ? 1 : 0); i < toCreate.length; i++) this.expectations.creationObserved(key);
    if (error) errors.push(error);
    await Promise.all(
      del.map(async (p) => {
        const name = p.metadata?.name ?? '';
        try {
          await client.delete(name);
          this.ctx.recorder.event(ds, 'Normal', 'SuccessfulDelete', `Deleted pod: ${name}`);
        } catch (err) {
          this.expectations.deletionObserved(key, metaNamespaceKey(p));
          if (isNotFound(err)) return;
          this.ctx.recorder.event(ds, 'Warning', 'FailedDelete', `Error deleting: ${errorText(err)}`);
          errors.push(err);
        }
      }),
    );
    if (errors.length > 0) throw errors[0];
  }

  /** Deletes old pods while at most `maxUnavailable` nodes lack an available daemon pod (`rollingUpdate`). */
  private async rollingUpdate(ds: DaemonSet, key: string, nodes: Node[], byNode: Map<string, Pod[]>, hash: string) {
    const now = this.cfg.now();
    const minReady = ds.spec?.minReadySeconds ?? 0;
    let desired = 0;
    let unavailable = 0;
    const oldAvailable: Pod[] = [];
    const oldUnavailable: Pod[] = [];
    for (const node of nodes) {
      if (!nodeShouldRunDaemonPod(node, ds).shouldRun) continue;
      desired++;
      const here = (byNode.get(node.metadata?.name ?? '') ?? []).filter((p) => !isTerminating(p));
      if (!here.some((p) => isPodAvailable(p, minReady, now))) unavailable++;
      for (const p of here) {
        if (p.metadata?.labels?.[DAEMONSET_HASH_LABEL] === hash) continue;
        (isPodAvailable(p, minReady, now) ? oldAvailable : oldUnavailable).push(p);
      }
    }
    const maxUnavailable = scaledValue(ds.spec?.updateStrategy?.rollingUpdate?.maxUnavailable, desired, 1);
    const toDelete = [...oldUnavailable];
    for (const p of oldAvailable) {
      if (unavailable >= maxUnavailable) break;
      toDelete.push(p);
      unavailable++;
    }
    await this.syncNodes(ds, key, toDelete, [], hash);
  }

  private async updateStatus(
    ds: DaemonSet,
    nodes: Node[],
    byNode: Map<string, Pod[]>,
    hash: string,
    collisionCount: number,
  ): Promise<void> {
    const now = this.cfg.now();
    const minReady = ds.spec?.minReadySeconds ?? 0;
    let desired = 0;
    let current = 0;
    let misscheduled = 0;
    let ready = 0;
    let updated = 0;
    let available = 0;
    let waitForAvailable = false;
    for (const node of nodes) {
      const { shouldRun } = nodeShouldRunDaemonPod(node, ds);
      const here = (byNode.get(node.metadata?.name ?? '') ?? []).filter((p) => !isTerminating(p));
      if (shouldRun) {
        desired++;
        if (here.length > 0) {
          current++;
          const oldest = [...here].sort((a, b) => created(a) - created(b))[0] as Pod;
          if (isPodReady(oldest)) {
            ready++;
            if (isPodAvailable(oldest, minReady, now)) available++;
            else waitForAvailable = true;
          }
          if (here.some((p) => p.metadata?.labels?.[DAEMONSET_HASH_LABEL] === hash)) updated++;
        }
      } else if (here.length > 0) {
        misscheduled++;
      }
    }
    const status: NonNullable<DaemonSet['status']> = {
      currentNumberScheduled: current,
      numberMisscheduled: misscheduled,
      desiredNumberScheduled: desired,
      numberReady: ready,
      observedGeneration: ds.metadata?.generation,
      updatedNumberScheduled: updated,
      numberAvailable: available,
      numberUnavailable: desired - available,
      collisionCount,
      ...(ds.status?.conditions ? { conditions: ds.status.conditions } : {}),
    };
    if (waitForAvailable && minReady > 0) this.queue.addAfter(metaNamespaceKey(ds), minReady * 1000);
    const old = ds.status;
    const same =
      old &&
      (Object.keys(status) as (keyof typeof status)[]).every(
        (k) => k === 'conditions' || (old[k] ?? 0) === (status[k] ?? 0),
      );
    if (same) return;
    const client = this.ctx.client.resource(DaemonSetKind, ds.metadata?.namespace ?? '');
    let target: DaemonSet = { ...ds, status };
    for (let attempt = 0; ; attempt++) {
      try {
        await client.updateStatus(target as DaemonSet & ApiObject);
        return;
      } catch (err) {
        if (!isConflict(err) || attempt >= 2) throw err;
        const fresh = await client.get(ds.metadata?.name ?? '');
        if (fresh.metadata?.uid !== ds.metadata?.uid) return;
        target = { ...fresh, status: { ...status, conditions: fresh.status?.conditions } };
      }
    }
  }
}

/** The `daemonset` controller of the controller manager. */
export const daemonSetController: ControllerDefinition<DaemonSetControllerConfig> = {
  name: 'daemonset',
  enabledByDefault: true,
  serviceAccount: 'daemon-set-controller',
  options: () => new DaemonSetControllerOptions(),
  run: (ctx, cfg) => new DaemonSetController(ctx, cfg).run(),
};
