/**
 * The statefulset controller (model: Kubernetes 1.21 `pkg/controller/statefulset/stateful_set.go`,
 * `stateful_set_control.go`, `stateful_pod_control.go`, `stateful_set_utils.go`): pods `<set>-<ordinal>` with a
 * stable hostname (`<set>-<ordinal>`, subdomain the set's `serviceName`) and storage (PersistentVolumeClaims
 * `<template>-<set>-<ordinal>` from `volumeClaimTemplates`, created before the pod and never deleted by it).
 *
 * OrderedReady creates pods in ordinal order, each once the ones before it are Running and Ready, and removes
 * them from the highest ordinal down, one at a time; Parallel creates and removes without waiting. Each version
 * of the pod template is a ControllerRevision; pods carry theirs in `controller-revision-hash`. RollingUpdate
 * replaces pods not at the update revision from the highest ordinal down to `partition`, one at a time, each
 * once the others are healthy; OnDelete creates replaced pods at the update revision and leaves the rest alone.
 */
import {
  type ApiObject,
  type ControllerRevision,
  ControllerRevisionKind,
  isAlreadyExists,
  isConflict,
  isNotFound,
  type Kind,
  labelSelectorAsSelector,
  type PersistentVolumeClaim,
  PersistentVolumeClaimKind,
  type Pod,
  PodKind,
  type Selector,
  type StatefulSet,
  StatefulSetKind,
} from '@platform/api';
import {
  isDeletedFinalStateUnknown,
  metaNamespaceKey,
  NAMESPACE_INDEX,
  type ResourceClient,
  WorkQueue,
} from '@platform/client';
import { type FlagDef, intFlag } from '@platform/common';

import { type ControllerContext, type ControllerDefinition, ControllerOptions } from '../../controller';
import { ensureRevision, truncateHistory } from '../workload-util/history';
import {
  claimObjects,
  controllerRefOf,
  errorText,
  isPodReady,
  newControllerRef,
  ownerStillExists,
  podFromTemplate,
  runWorkerLoop,
} from '../workload-util/workload-util';

/** What the statefulset controller runs with. */
export interface StatefulSetControllerConfig {
  /** `--concurrent-statefulset-syncs`. */
  concurrentStatefulSetSyncs: number;
}

/** `--concurrent-statefulset-syncs` (Document 2; default 5). */
export class StatefulSetControllerOptions extends ControllerOptions<StatefulSetControllerConfig> {
  concurrentStatefulSetSyncs = 5;

  constructor() {
    super('StatefulSet controller');
  }

  protected flagDefs(): FlagDef[] {
    return [
      intFlag(
        'concurrent-statefulset-syncs',
        'The number of statefulset objects that are allowed to sync concurrently. Larger number = more responsive statefulsets, but more CPU (and network) load',
        this.concurrentStatefulSetSyncs,
        (v) => (this.concurrentStatefulSetSyncs = v),
        { type: 'int32' },
      ),
    ];
  }

  protected override validateValues(): Error[] {
    return this.concurrentStatefulSetSyncs < 1
      ? [new Error(`--concurrent-statefulset-syncs must be at least 1, got ${this.concurrentStatefulSetSyncs}`)]
      : [];
  }

  values(): StatefulSetControllerConfig {
    return { concurrentStatefulSetSyncs: this.concurrentStatefulSetSyncs };
  }
}

/** The label naming the pod in its set (`statefulset.kubernetes.io/pod-name`). */
export const STATEFULSET_POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
/** The label of a pod's revision (`controller-revision-hash`). */
export const POD_REVISION_LABEL = 'controller-revision-hash';

const SET_KIND = StatefulSetKind as unknown as Kind;

/** The ordinal of a member pod `<set>-<n>`, or -1. */
export function ordinalOf(set: StatefulSet, pod: Pod): number {
  const name = pod.metadata?.name ?? '';
  const prefix = `${set.metadata?.name}-`;
  if (!name.startsWith(prefix)) return -1;
  const rest = name.slice(prefix.length);
  return /^(0|[1-9][0-9]*)$/.test(rest) ? Number(rest) : -1;
}

/** The claim name of a volume claim template for an ordinal: `<template>-<set>-<ordinal>`. */
export function claimName(set: StatefulSet, template: string, ordinal: number): string {
  return `${template}-${set.metadata?.name}-${ordinal}`;
}

function isTerminating(p: Pod): boolean {
  return !!p.metadata?.deletionTimestamp;
}

function isRunningAndReady(p: Pod): boolean {
  return p.status?.phase === 'Running' && isPodReady(p);
}

function isHealthy(p: Pod): boolean {
  return isRunningAndReady(p) && !isTerminating(p);
}

function revisionOf(p: Pod): string {
  return p.metadata?.labels?.[POD_REVISION_LABEL] ?? '';
}

/** The revision data of a set: its pod template, to be put back whole (`getPatch`). */
function revisionData(set: StatefulSet): unknown {
  return { spec: { template: { ...structuredClone(set.spec?.template ?? {}), $patch: 'replace' } } };
}

/** The set as of a revision: its pod template replaced by the revision's (`ApplyRevision`). */
function applyRevision(set: StatefulSet, rev: ControllerRevision): StatefulSet {
  const out = structuredClone(set);
  const data = rev.data as { spec?: { template?: Record<string, unknown> } } | undefined;
  const template = { ...(data?.spec?.template ?? {}) };
  delete template.$patch;
  (out.spec as { template: unknown }).template = template;
  return out;
}

/** A pod slot: an existing pod, or one to create. */
interface Slot {
  pod: Pod;
  isNew: boolean;
}

/** One running statefulset controller. */
class StatefulSetController {
  private readonly sets;
  private readonly pods;
  private readonly revisions;
  private readonly claims;
  private readonly queue: WorkQueue<string>;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly cfg: StatefulSetControllerConfig,
  ) {
    this.sets = ctx.informers.informerFor(StatefulSetKind);
    this.pods = ctx.informers.informerFor(PodKind);
    this.revisions = ctx.informers.informerFor(ControllerRevisionKind);
    this.claims = ctx.informers.informerFor(PersistentVolumeClaimKind);
    this.queue = new WorkQueue<string>({ name: 'statefulset', metrics: ctx.metrics });
    const enqueue = (s: ApiObject) => this.queue.add(metaNamespaceKey(s));
    this.sets.addEventHandler({
      onAdd: enqueue,
      onUpdate: (_old, cur) => enqueue(cur),
      onDelete: (s) => enqueue(isDeletedFinalStateUnknown(s) ? s.obj : s),
    });
    const podChanged = (p: Pod) => {
      const ref = controllerRefOf(p);
      if (ref) {
        if (ref.kind !== 'StatefulSet') return;
        const set = this.sets.indexer.get(`${p.metadata?.namespace}/${ref.name}`);
        if (set && set.metadata?.uid === ref.uid) enqueue(set);
        return;
      }
      for (const set of this.sets.indexer.byIndex(NAMESPACE_INDEX, p.metadata?.namespace ?? '')) {
        try {
          if (labelSelectorAsSelector(set.spec?.selector).matches(p.metadata?.labels ?? {})) enqueue(set);
        } catch {
          // An invalid selector selects nothing.
        }
      }
    };
    this.pods.addEventHandler({
      onAdd: podChanged,
      onUpdate: (old, cur) => {
        if (old.metadata?.resourceVersion === cur.metadata?.resourceVersion) return;
        podChanged(cur);
        if (controllerRefOf(old)?.uid !== controllerRefOf(cur)?.uid) podChanged(old);
      },
      onDelete: (p) => podChanged(isDeletedFinalStateUnknown(p) ? p.obj : p),
    });
  }

  async run(): Promise<void> {
    await runWorkerLoop(
      this.ctx,
      this.queue,
      this.cfg.concurrentStatefulSetSyncs,
      () => this.sets.hasSynced() && this.pods.hasSynced() && this.revisions.hasSynced() && this.claims.hasSynced(),
      (key) => this.sync(key),
    );
  }

  private podClient(ns: string): ResourceClient<Pod & ApiObject> {
    return this.ctx.client.resource(PodKind, ns);
  }

  private async sync(key: string): Promise<void> {
    const cached = this.sets.indexer.get(key);
    if (!cached) return;
    const set: StatefulSet = { ...structuredClone(cached), apiVersion: 'apps/v1', kind: 'StatefulSet' };
    const ns = set.metadata?.namespace ?? '';
    let selector: Selector;
    try {
      selector = labelSelectorAsSelector(set.spec?.selector);
    } catch (err) {
      this.ctx.recorder.event(
        set,
        'Warning',
        'SelectorParsingFailed',
        `could not convert label selector: ${errorText(err)}`,
      );
      return;
    }
    const canAdopt = ownerStillExists(this.ctx.client.resource(StatefulSetKind, ns) as unknown as ResourceClient, set);
    const revisions = await claimObjects(
      this.ctx.client.resource(ControllerRevisionKind, ns),
      set,
      SET_KIND,
      (r) => selector.matches(r.metadata?.labels ?? {}),
      this.revisions.indexer.byIndex(NAMESPACE_INDEX, ns),
      canAdopt,
    );
    const pods = await claimObjects(
      this.podClient(ns),
      set,
      SET_KIND,
      (p) => selector.matches(p.metadata?.labels ?? {}) && ordinalOf(set, p) >= 0,
      this.pods.indexer.byIndex(NAMESPACE_INDEX, ns),
      canAdopt,
    );
    await this.updateStatefulSet(set, revisions, pods);
  }

  private async updateStatefulSet(set: StatefulSet, existingRevisions: ControllerRevision[], pods: Pod[]) {
    const ns = set.metadata?.namespace ?? '';
    const revClient = this.ctx.client.resource(ControllerRevisionKind, ns);
    const spec = set.spec as NonNullable<StatefulSet['spec']>;
    const { update, revisions, collisionCount } = await ensureRevision(
      revClient,
      set,
      SET_KIND,
      spec.template?.metadata?.labels,
      revisionData(set),
      existingRevisions,
      set.status?.collisionCount ?? 0,
    );
    const current = revisions.find((r) => r.metadata?.name === set.status?.currentRevision) ?? update;
    const currentName = current.metadata?.name ?? '';
    const updateName = update.metadata?.name ?? '';
    const currentSet = applyRevision(set, current);
    const updateSet = applyRevision(set, update);

    const status: NonNullable<StatefulSet['status']> = {
      observedGeneration: set.metadata?.generation,
      replicas: 0,
      readyReplicas: 0,
      currentReplicas: 0,
      updatedReplicas: 0,
      currentRevision: currentName,
      updateRevision: updateName,
      collisionCount,
    };
    await this.syncPods(set, currentSet, updateSet, currentName, updateName, pods, status);
    await this.updateStatus(set, status, currentName, updateName);
    const live = new Set([currentName, updateName, ...pods.map(revisionOf)]);
    await truncateHistory(revClient, revisions, live, spec.revisionHistoryLimit ?? 10);
  }

  /** The pod of `ordinal` at the current or the update revision (`newVersionedStatefulSetPod`). */
  private newPod(
    currentSet: StatefulSet,
    updateSet: StatefulSet,
    currentName: string,
    updateName: string,
    ordinal: number,
  ) {
    const strategy = currentSet.spec?.updateStrategy;
    const partition = strategy?.rollingUpdate?.partition ?? 0;
    const useCurrent =
      (strategy?.type ?? 'RollingUpdate') === 'RollingUpdate' &&
      (strategy?.rollingUpdate ? ordinal < partition : ordinal < (currentSet.status?.currentReplicas ?? 0));
    const from = useCurrent ? currentSet : updateSet;
    const pod = podFromTemplate(from.spec?.template, from, newControllerRef(from, SET_KIND), {
      name: `${from.metadata?.name}-${ordinal}`,
    });
    const name = pod.metadata?.name ?? '';
    pod.metadata = {
      ...pod.metadata,
      labels: {
        ...pod.metadata?.labels,
        [STATEFULSET_POD_NAME_LABEL]: name,
        [POD_REVISION_LABEL]: useCurrent ? currentName : updateName,
      },
    };
    const podSpec = (pod.spec ??= { containers: [] });
    podSpec.hostname = name;
    if (from.spec?.serviceName) podSpec.subdomain = from.spec.serviceName;
    // Storage: a volume per claim template, bound to the ordinal's claim.
    const claims = from.spec?.volumeClaimTemplates ?? [];
    if (claims.length > 0) {
      const names = new Set(claims.map((c) => c.metadata?.name));
      podSpec.volumes = [
        ...(podSpec.volumes ?? []).filter((v) => !names.has(v.name)),
        ...claims.map((c) => ({
          name: c.metadata?.name ?? '',
          persistentVolumeClaim: { claimName: claimName(from, c.metadata?.name ?? '', ordinal) },
        })),
      ];
    }
    return pod;
  }

  private async syncPods(
    set: StatefulSet,
    currentSet: StatefulSet,
    updateSet: StatefulSet,
    currentName: string,
    updateName: string,
    pods: Pod[],
    status: NonNullable<StatefulSet['status']>,
  ): Promise<void> {
    const spec = set.spec as NonNullable<StatefulSet['spec']>;
    const replicaCount = spec.replicas ?? 1;
    const slots: (Slot | undefined)[] = Array.from({ length: replicaCount }, () => undefined);
    const condemned: Pod[] = [];
    const count = (p: Pod, sign: 1 | -1) => {
      status.replicas += sign;
      if (isRunningAndReady(p)) status.readyReplicas = (status.readyReplicas ?? 0) + sign;
      if (!isTerminating(p)) {
        if (revisionOf(p) === currentName) status.currentReplicas = (status.currentReplicas ?? 0) + sign;
        if (revisionOf(p) === updateName) status.updatedReplicas = (status.updatedReplicas ?? 0) + sign;
      }
    };
    for (const p of pods) {
      count(p, 1);
      const ord = ordinalOf(set, p);
      if (ord >= 0 && ord < replicaCount) slots[ord] = { pod: p, isNew: false };
      else if (ord >= replicaCount) condemned.push(p);
    }
    for (let i = 0; i < replicaCount; i++) {
      if (!slots[i]) slots[i] = { pod: this.newPod(currentSet, updateSet, currentName, updateName, i), isNew: true };
    }
    condemned.sort((a, b) => ordinalOf(set, b) - ordinalOf(set, a));
    const unhealthy = [...slots.map((s) => s?.pod as Pod), ...condemned].find((p) => !p.metadata?.uid || !isHealthy(p));
    if (set.metadata?.deletionTimestamp) return;
    const monotonic = spec.podManagementPolicy !== 'Parallel';

    for (let i = 0; i < replicaCount; i++) {
      const slot = slots[i] as Slot;
      if (!slot.isNew && slot.pod.status?.phase === 'Failed') {
        // A failed pod is deleted and made again.
        await this.deletePod(set, slot.pod);
        count(slot.pod, -1);
        slots[i] = { pod: this.newPod(currentSet, updateSet, currentName, updateName, i), isNew: true };
      }
      const s = slots[i] as Slot;
      if (s.isNew) {
        await this.createPod(set, s.pod, i);
        s.isNew = false;
        status.replicas++;
        if (revisionOf(s.pod) === currentName) status.currentReplicas = (status.currentReplicas ?? 0) + 1;
        if (revisionOf(s.pod) === updateName) status.updatedReplicas = (status.updatedReplicas ?? 0) + 1;
        if (monotonic) return;
        continue;
      }
      if (isTerminating(s.pod) && monotonic) return;
      if (!isRunningAndReady(s.pod) && monotonic) return;
      if (!isTerminating(s.pod)) await this.fixIdentity(set, s.pod, i);
    }

    for (const p of condemned) {
      if (isTerminating(p)) {
        if (monotonic) return;
        continue;
      }
      if (!isRunningAndReady(p) && monotonic && p !== unhealthy) return;
      await this.deletePod(set, p);
      if (monotonic) return;
    }

    if ((spec.updateStrategy?.type ?? 'RollingUpdate') === 'OnDelete') return;
    const partition = spec.updateStrategy?.rollingUpdate?.partition ?? 0;
    for (let target = replicaCount - 1; target >= partition; target--) {
      const p = (slots[target] as Slot).pod;
      if (revisionOf(p) !== updateName && !isTerminating(p)) {
        await this.deletePod(set, p);
        status.currentReplicas = (status.currentReplicas ?? 0) - 1;
        return;
      }
      if (!isHealthy(p)) return;
    }
  }

  /** Creates the ordinal's missing claims, then its pod (`CreateStatefulPod`). */
  private async createPod(set: StatefulSet, pod: Pod, ordinal: number): Promise<void> {
    const ns = set.metadata?.namespace ?? '';
    const setName = set.metadata?.name ?? '';
    const podName = pod.metadata?.name ?? '';
    for (const tmpl of set.spec?.volumeClaimTemplates ?? []) {
      const name = claimName(set, tmpl.metadata?.name ?? '', ordinal);
      if (this.claims.indexer.get(`${ns}/${name}`)) continue;
      const claim: PersistentVolumeClaim = {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: {
          name,
          namespace: ns,
          labels: { ...tmpl.metadata?.labels, ...set.spec?.selector?.matchLabels },
          ...(tmpl.metadata?.annotations ? { annotations: tmpl.metadata.annotations } : {}),
        },
        spec: structuredClone(tmpl.spec),
      };
      try {
        await this.ctx.client.resource(PersistentVolumeClaimKind, ns).create(claim);
        this.ctx.recorder.event(
          set,
          'Normal',
          'SuccessfulCreate',
          `create Claim ${name} Pod ${podName} in StatefulSet ${setName} success`,
        );
      } catch (err) {
        if (isAlreadyExists(err)) continue;
        this.ctx.recorder.event(
          set,
          'Warning',
          'FailedCreate',
          `create Claim ${name} for Pod ${podName} in StatefulSet ${setName} failed error: ${errorText(err)}`,
        );
        throw err;
      }
    }
    try {
      await this.podClient(ns).create(pod);
    } catch (err) {
      // The pod exists (the cache lags): the next sync sees it.
      if (isAlreadyExists(err)) return;
      this.ctx.recorder.event(
        set,
        'Warning',
        'FailedCreate',
        `create Pod ${podName} in StatefulSet ${setName} failed error: ${errorText(err)}`,
      );
      throw err;
    }
    this.ctx.recorder.event(
      set,
      'Normal',
      'SuccessfulCreate',
      `create Pod ${podName} in StatefulSet ${setName} successful`,
    );
  }

  private async deletePod(set: StatefulSet, pod: Pod): Promise<void> {
    const podName = pod.metadata?.name ?? '';
    const setName = set.metadata?.name ?? '';
    try {
      await this.podClient(set.metadata?.namespace ?? '').delete(podName, {
        preconditions: { uid: pod.metadata?.uid },
      });
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return; // already gone, or replaced by a new pod of that name
      this.ctx.recorder.event(
        set,
        'Warning',
        'FailedDelete',
        `delete Pod ${podName} in StatefulSet ${setName} failed error: ${errorText(err)}`,
      );
      throw err;
    }
    this.ctx.recorder.event(
      set,
      'Normal',
      'SuccessfulDelete',
      `delete Pod ${podName} in StatefulSet ${setName} successful`,
    );
  }

  /** Puts back the identity labels of a member pod someone changed (`identityMatches` / `updateIdentity`). */
  private async fixIdentity(set: StatefulSet, pod: Pod, ordinal: number): Promise<void> {
    const name = `${set.metadata?.name}-${ordinal}`;
    if (pod.metadata?.labels?.[STATEFULSET_POD_NAME_LABEL] === name) return;
    try {
      await this.podClient(set.metadata?.namespace ?? '').patch(pod.metadata?.name ?? '', 'merge', {
        metadata: { labels: { [STATEFULSET_POD_NAME_LABEL]: name } },
      });
      this.ctx.recorder.event(
        set,
        'Normal',
        'SuccessfulUpdate',
        `update Pod ${pod.metadata?.name} in StatefulSet ${set.metadata?.name} successful`,
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /**
   * Writes the status when it changed (`updateStatefulSetStatus`): once every pod is updated and ready, the update
   * revision becomes the current one. A conflict re-reads the set and writes again.
   */
  private async updateStatus(
    set: StatefulSet,
    status: NonNullable<StatefulSet['status']>,
    currentName: string,
    updateName: string,
  ): Promise<void> {
    const spec = set.spec as NonNullable<StatefulSet['spec']>;
    if (
      (spec.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate' &&
      status.updatedReplicas === status.replicas &&
      status.readyReplicas === status.replicas &&
      status.replicas === (spec.replicas ?? 1)
    ) {
      status.currentReplicas = status.updatedReplicas;
      status.currentRevision = updateName;
    } else if (currentName === updateName) {
      status.currentRevision = updateName;
    }
    const old = set.status;
    const same =
      old &&
      old.observedGeneration === status.observedGeneration &&
      old.replicas === status.replicas &&
      (old.readyReplicas ?? 0) === status.readyReplicas &&
      (old.currentReplicas ?? 0) === status.currentReplicas &&
      (old.updatedReplicas ?? 0) === status.updatedReplicas &&
      old.currentRevision === status.currentRevision &&
      old.updateRevision === status.updateRevision &&
      (old.collisionCount ?? 0) === (status.collisionCount ?? 0);
    if (same) return;
    const client = this.ctx.client.resource(StatefulSetKind, set.metadata?.namespace ?? '');
    let target: StatefulSet = { ...set, status: { ...status, conditions: old?.conditions } };
    for (let attempt = 0; ; attempt++) {
      try {
        await client.updateStatus(target as StatefulSet & ApiObject);
        return;
      } catch (err) {
        if (!isConflict(err) || attempt >= 2) throw err;
        const fresh = await client.get(set.metadata?.name ?? '');
        if (fresh.metadata?.uid !== set.metadata?.uid) return;
        target = { ...fresh, status: { ...status, conditions: fresh.status?.conditions } };
      }
    }
  }
}

/** The `statefulset` controller of the controller manager. */
export const statefulSetController: ControllerDefinition<StatefulSetControllerConfig> = {
  name: 'statefulset',
  enabledByDefault: true,
  options: () => new StatefulSetControllerOptions(),
  run: (ctx, cfg) => new StatefulSetController(ctx, cfg).run(),
};
