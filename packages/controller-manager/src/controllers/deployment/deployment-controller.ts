/**
 * The Deployment controller (model: `pkg/controller/deployment/`: `deployment_controller.go`, `sync.go`,
 * `rolling.go`, `recreate.go`, `progress.go`). It owns ReplicaSets, never pods: one ReplicaSet per pod template
 * (named `<deployment>-<pod-template-hash>`), the newest being the one whose template equals the Deployment's.
 *
 * A sync claims the ReplicaSets (adopt/release by selector and controller reference), then: being deleted → status
 * only; paused → scale and clean up only (and the `DeploymentPaused` condition); a scaling event (the active
 * ReplicaSets' desired-replicas annotation differs from `spec.replicas`) → proportional scaling; otherwise one step
 * of the rollout: RollingUpdate scales the new ReplicaSet up within `maxSurge` and the old ones down within
 * `maxUnavailable`; Recreate scales every old one to 0, waits for their pods to go, then scales the new one up.
 * Once complete, old ReplicaSets beyond `revisionHistoryLimit` are deleted. Status and the Progressing/Available
 * conditions follow; a rollout that stalls past `progressDeadlineSeconds` gets `ProgressDeadlineExceeded`.
 * `kubectl rollout undo` (client-side in 1.21) patches the template back to an old ReplicaSet's: that ReplicaSet
 * becomes the new one again and gets the next revision.
 */
import {
  type ApiObject,
  type Deployment,
  DeploymentKind,
  isAlreadyExists,
  isNotFound,
  labelSelectorAsSelector,
  type Pod,
  PodKind,
  type ReplicaSet,
  ReplicaSetKind,
} from '@platform/api';
import {
  metaNamespaceKey,
  NAMESPACE_INDEX,
  type ResourceClient,
  runWorkers,
  type SharedIndexInformer,
  splitMetaNamespaceKey,
  WorkQueue,
} from '@platform/client';

import { type ControllerContext } from '../../controller';
import { claim } from '../util/claim';
import { CONTROLLER_UID_INDEX, controllerUidIndexFunc, ensureIndex, unwrapTombstone } from '../util/informers';
import { getControllerOf, newControllerRef } from '../util/pods';
import * as u from './util';

type RS = ReplicaSet & ApiObject;
type D = Deployment & ApiObject;

/** Settings of the controller. */
export interface DeploymentControllerOptions {
  workers: number;
  /** `--deployment-controller-sync-period` (ms): kept for compatibility; every Deployment is resynced this often. */
  syncPeriodMs: number;
}

/** Runs the controller until `ctx.signal` aborts. */
export async function runDeploymentController(ctx: ControllerContext, o: DeploymentControllerOptions): Promise<void> {
  await new DeploymentController(ctx).run(o.workers);
}

class DeploymentController {
  private readonly deployments: SharedIndexInformer<D>;
  private readonly sets: SharedIndexInformer<RS>;
  private readonly pods: SharedIndexInformer<Pod>;
  private readonly queue: WorkQueue<string>;
  private readonly dClient: ResourceClient<D>;
  private readonly rsClient: ResourceClient<RS>;

  constructor(private readonly ctx: ControllerContext) {
    this.deployments = ctx.informers.informerFor(DeploymentKind) as SharedIndexInformer<D>;
    this.sets = ctx.informers.informerFor(ReplicaSetKind) as SharedIndexInformer<RS>;
    this.pods = ctx.informers.informerFor(PodKind) as SharedIndexInformer<Pod>;
    ensureIndex(this.sets, CONTROLLER_UID_INDEX, controllerUidIndexFunc);
    ensureIndex(this.pods, CONTROLLER_UID_INDEX, controllerUidIndexFunc);
    this.dClient = ctx.client.resource(DeploymentKind) as ResourceClient<D>;
    this.rsClient = ctx.client.resource(ReplicaSetKind) as ResourceClient<RS>;
    this.queue = new WorkQueue<string>({ name: 'deployment', metrics: ctx.metrics });

    const enqueue = (o: ApiObject): void => this.queue.add(metaNamespaceKey(o));
    this.deployments.addEventHandler({
      onAdd: enqueue,
      onUpdate: (_o, n) => enqueue(n),
      onDelete: (d) => enqueue(unwrapTombstone(d)),
    });
    this.sets.addEventHandler({
      onAdd: (rs) => this.onReplicaSet(rs),
      onUpdate: (old, rs) => {
        if (old.metadata?.resourceVersion === rs.metadata?.resourceVersion) return;
        const oldRef = getControllerOf(old);
        if (oldRef && oldRef.uid !== getControllerOf(rs)?.uid) this.onReplicaSet(old);
        this.onReplicaSet(rs, JSON.stringify(old.metadata?.labels) !== JSON.stringify(rs.metadata?.labels));
      },
      onDelete: (d) => {
        const rs = unwrapTombstone(d);
        const owner = this.ownerOf(rs);
        if (owner) enqueue(owner);
      },
    });
    // Recreate waits for the old pods to go: their deletions wake the Deployment up.
    this.pods.addEventHandler({
      onDelete: (d) => {
        const pod = unwrapTombstone(d);
        const ref = getControllerOf(pod);
        if (ref?.kind !== 'ReplicaSet') return;
        const rs = this.sets.indexer.get(`${pod.metadata?.namespace ?? ''}/${ref.name}`);
        const owner = rs && this.ownerOf(rs);
        if (owner?.spec?.strategy?.type === 'Recreate') enqueue(owner);
      },
    });
  }

  private ownerOf(rs: RS): D | undefined {
    const ref = getControllerOf(rs);
    if (ref?.kind !== 'Deployment') return undefined;
    const d = this.deployments.indexer.get(`${rs.metadata?.namespace ?? ''}/${ref.name}`);
    return d?.metadata?.uid === ref.uid ? d : undefined;
  }

  private onReplicaSet(rs: RS, labelsChanged = true): void {
    const owner = this.ownerOf(rs);
    if (owner) return this.queue.add(metaNamespaceKey(owner));
    if (getControllerOf(rs) || !labelsChanged) return;
    for (const d of this.deployments.indexer.byIndex(NAMESPACE_INDEX, rs.metadata?.namespace ?? '')) {
      const sel = labelSelectorAsSelector(d.spec?.selector);
      if (!sel.isEmpty() && sel.matches(rs.metadata?.labels)) this.queue.add(metaNamespaceKey(d));
    }
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

  /** One level-triggered sync of the Deployment `key`. */
  async sync(key: string): Promise<void> {
    const cached = this.deployments.indexer.get(key);
    if (!cached) return;
    const d: D = { ...structuredClone(cached), apiVersion: 'apps/v1', kind: 'Deployment' };
    const { namespace } = splitMetaNamespaceKey(key);
    const sel = d.spec?.selector;
    if (
      !sel ||
      ((sel.matchLabels === undefined || Object.keys(sel.matchLabels).length === 0) && !sel.matchExpressions?.length)
    ) {
      this.ctx.recorder.event(
        d,
        'Warning',
        'SelectingAll',
        'This deployment is selecting all pods. A non-empty selector is required.',
      );
      if ((d.status?.observedGeneration ?? 0) < (d.metadata?.generation ?? 0)) {
        d.status = { ...d.status, observedGeneration: d.metadata?.generation };
        await this.writeStatus(d);
      }
      return;
    }
    const rsList = await this.claimReplicaSets(d, namespace);
    if (d.metadata?.deletionTimestamp) return this.syncStatusOnly(d, rsList);
    await this.checkPausedConditions(d);
    if (d.spec?.paused) return this.syncScaleOnly(d, rsList);
    if (this.isScalingEvent(d, rsList)) return this.syncScaleOnly(d, rsList);
    if (d.spec?.strategy?.type === 'Recreate') return this.rolloutRecreate(d, rsList);
    return this.rolloutRolling(d, rsList);
  }

  private async claimReplicaSets(d: D, namespace: string): Promise<RS[]> {
    const candidates = this.sets.indexer.byIndex(NAMESPACE_INDEX, namespace);
    return claim(
      {
        owner: d,
        selector: labelSelectorAsSelector(d.spec?.selector),
        ref: newControllerRef(d, 'apps/v1', 'Deployment'),
        getFresh: () => this.dClient.namespace(namespace).get(d.metadata?.name ?? '', { signal: this.ctx.signal }),
      },
      candidates,
      this.rsClient,
      this.ctx.signal,
    );
  }

  private isScalingEvent(d: D, rsList: RS[]): boolean {
    const { newRS, oldRSs } = this.findSets(d, rsList);
    const all = newRS ? [newRS, ...oldRSs] : oldRSs;
    for (const rs of all.filter((r) => u.replicasOf(r) > 0)) {
      const desired = rs.metadata?.annotations?.[u.DESIRED_REPLICAS_ANNOTATION];
      if (desired === undefined) continue;
      if (desired !== String(u.replicasOf(d))) return true;
    }
    return false;
  }

  /** The new ReplicaSet (oldest one whose template matches) and the others. */
  private findSets(d: D, rsList: RS[]): { newRS?: RS; oldRSs: RS[] } {
    const sorted = [...rsList].sort(u.byCreation);
    const newRS = sorted.find((rs) => u.equalIgnoreHash(rs.spec?.template, d.spec?.template));
    return { newRS, oldRSs: sorted.filter((rs) => rs !== newRS) };
  }

  private async checkPausedConditions(d: D): Promise<void> {
    if (!u.hasProgressDeadline(d)) return;
    const cond = u.getCondition(d.status, 'Progressing');
    if (cond?.reason === u.TIMED_OUT_REASON) return;
    const pausedExists = cond?.reason === u.PAUSED_REASON;
    const status: u.DeploymentStatus = structuredClone(d.status ?? {});
    if (d.spec?.paused && !pausedExists) {
      u.setCondition(status, u.newCondition('Progressing', 'Unknown', u.PAUSED_REASON, 'Deployment is paused'));
    } else if (!d.spec?.paused && pausedExists) {
      u.setCondition(status, u.newCondition('Progressing', 'Unknown', u.RESUMED_REASON, 'Deployment is resumed'));
    } else return;
    d.status = status;
    await this.writeStatus(d);
  }

  /** Finds (or creates) the new ReplicaSet and brings revisions up to date (`getAllReplicaSetsAndSyncRevision`). */
  private async getAllAndSyncRevision(d: D, rsList: RS[], create: boolean): Promise<{ newRS?: RS; oldRSs: RS[] }> {
    const { newRS: existing, oldRSs } = this.findSets(d, rsList);
    const newRevision = String(u.maxRevision(oldRSs) + 1);
    const ns = d.metadata?.namespace ?? '';
    const rsClient = this.rsClient.namespace(ns);
    if (existing) {
      const copy = structuredClone(existing);
      const annotationsChanged = u.setNewReplicaSetAnnotations(d, copy, newRevision, true);
      const minReadyChanged = (copy.spec?.minReadySeconds ?? 0) !== (d.spec?.minReadySeconds ?? 0);
      let rs = existing;
      if (annotationsChanged || minReadyChanged) {
        copy.spec = { ...copy.spec!, minReadySeconds: d.spec?.minReadySeconds ?? 0 };
        rs = await rsClient.update(copy, { signal: this.ctx.signal });
      }
      const status: u.DeploymentStatus = structuredClone(d.status ?? {});
      let needsUpdate = this.setRevision(d, rs.metadata?.annotations?.[u.REVISION_ANNOTATION] ?? '');
      if (u.hasProgressDeadline(d) && !u.getCondition(status, 'Progressing')) {
        u.setCondition(
          status,
          u.newCondition(
            'Progressing',
            'True',
            u.FOUND_NEW_RS_REASON,
            `Found new replica set "${rs.metadata?.name ?? ''}"`,
          ),
        );
        needsUpdate = true;
      }
      if (needsUpdate) {
        d.status = { ...status, observedGeneration: d.status?.observedGeneration };
        await this.writeStatus(d, true);
      }
      return { newRS: rs, oldRSs };
    }
    if (!create) return { oldRSs };

    const template = structuredClone(d.spec!.template);
    const hash = u.computeHash(d.spec?.template, d.status?.collisionCount);
    template.metadata = {
      ...template.metadata,
      labels: { ...template.metadata?.labels, [u.POD_TEMPLATE_HASH_LABEL]: hash },
    };
    const selector = structuredClone(d.spec!.selector);
    selector.matchLabels = { ...selector.matchLabels, [u.POD_TEMPLATE_HASH_LABEL]: hash };
    const newRS: RS = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: `${d.metadata?.name ?? ''}-${hash}`,
        namespace: ns,
        ownerReferences: [newControllerRef(d, 'apps/v1', 'Deployment')],
        labels: { ...template.metadata.labels },
      },
      spec: { replicas: 0, minReadySeconds: d.spec?.minReadySeconds ?? 0, selector, template },
    };
    newRS.spec!.replicas = u.newRSNewReplicas(d, [...oldRSs, newRS], newRS);
    u.setNewReplicaSetAnnotations(d, newRS, newRevision, false);
    let created: RS;
    let alreadyExists = false;
    try {
      created = await rsClient.create(newRS, { signal: this.ctx.signal });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      alreadyExists = true;
      const rs = this.sets.indexer.get(`${ns}/${newRS.metadata!.name!}`) ?? (await rsClient.get(newRS.metadata!.name!));
      if (getControllerOf(rs)?.uid === d.metadata?.uid && u.equalIgnoreHash(rs.spec?.template, d.spec?.template)) {
        created = rs;
      } else {
        // A hash collision: another template has this name. Count it so the next hash differs.
        const status: u.DeploymentStatus = structuredClone(d.status ?? {});
        status.collisionCount = (status.collisionCount ?? 0) + 1;
        d.status = status;
        await this.writeStatus(d, true);
        throw new Error(
          `found a hash collision for deployment "${d.metadata?.name ?? ''}" - bumping collisionCount to ${status.collisionCount}`,
        );
      }
    }
    if (!alreadyExists && u.replicasOf(created) > 0)
      this.ctx.recorder.event(
        d,
        'Normal',
        'ScalingReplicaSet',
        `Scaled up replica set ${created.metadata?.name ?? ''} to ${u.replicasOf(created)}`,
      );
    const status: u.DeploymentStatus = structuredClone(d.status ?? {});
    let needsUpdate = this.setRevision(d, newRevision);
    if (!alreadyExists && u.hasProgressDeadline(d)) {
      u.setCondition(
        status,
        u.newCondition(
          'Progressing',
          'True',
          u.NEW_RS_REASON,
          `Created new replica set "${created.metadata?.name ?? ''}"`,
        ),
      );
      needsUpdate = true;
    }
    if (needsUpdate) {
      d.status = { ...status, observedGeneration: d.status?.observedGeneration };
      await this.writeStatus(d, true);
    }
    return { newRS: created, oldRSs };
  }

  /** Sets the Deployment's revision annotation (on `d`, written with the next status write). */
  private setRevision(d: D, revision: string): boolean {
    if (!revision) return false;
    const cur = d.metadata?.annotations?.[u.REVISION_ANNOTATION];
    if (cur === revision) return false;
    d.metadata = { ...d.metadata, annotations: { ...d.metadata?.annotations, [u.REVISION_ANNOTATION]: revision } };
    return true;
  }

  /**
   * Writes the Deployment: `withAnnotations` first writes its metadata (revision annotation) through an update,
   * then the status through `/status`. Keeps `d` current with what the API returned.
   */
  private async writeStatus(d: D, withAnnotations = false): Promise<void> {
    const client = this.dClient.namespace(d.metadata?.namespace ?? '');
    if (withAnnotations) {
      const cached = this.deployments.indexer.get(metaNamespaceKey(d));
      const ann = d.metadata?.annotations?.[u.REVISION_ANNOTATION];
      if (ann !== undefined && cached?.metadata?.annotations?.[u.REVISION_ANNOTATION] !== ann) {
        const updated = await client.update(
          {
            ...structuredClone(cached ?? d),
            metadata: {
              ...(cached ?? d).metadata,
              annotations: { ...(cached ?? d).metadata?.annotations, [u.REVISION_ANNOTATION]: ann },
            },
          } as D,
          { signal: this.ctx.signal },
        );
        d.metadata = updated.metadata;
      }
    }
    const updated = await client.updateStatus(d, { signal: this.ctx.signal });
    d.metadata = updated.metadata;
    d.status = updated.status;
  }

  private async scaleRS(rs: RS, newScale: number, d: D): Promise<{ scaled: boolean; rs: RS }> {
    const sizeChanged = u.replicasOf(rs) !== newScale;
    const max = u.replicasOf(d) + u.maxSurge(d);
    if (!sizeChanged && !u.replicasAnnotationsNeedUpdate(rs, u.replicasOf(d), max)) return { scaled: false, rs };
    const op = u.replicasOf(rs) > newScale ? 'down' : 'up';
    const copy = structuredClone(rs);
    copy.spec = { ...copy.spec!, replicas: newScale };
    u.setReplicasAnnotations(copy, u.replicasOf(d), max);
    const updated = await this.rsClient
      .namespace(rs.metadata?.namespace ?? '')
      .update(copy, { signal: this.ctx.signal });
    if (sizeChanged)
      this.ctx.recorder.event(
        d,
        'Normal',
        'ScalingReplicaSet',
        `Scaled ${op} replica set ${rs.metadata?.name ?? ''} to ${newScale}`,
      );
    return { scaled: sizeChanged, rs: updated };
  }

  private async scaleAndRecord(rs: RS, newScale: number, d: D): Promise<{ scaled: boolean; rs: RS }> {
    if (u.replicasOf(rs) === newScale) return { scaled: false, rs };
    return this.scaleRS(rs, newScale, d);
  }

  // ---- Rolling update ------------------------------------------------------------------------------------------

  private async rolloutRolling(d: D, rsList: RS[]): Promise<void> {
    const { newRS, oldRSs } = await this.getAllAndSyncRevision(d, rsList, true);
    let nrs = newRS!;
    let all = [...oldRSs, nrs];
    // Scale up the new ReplicaSet.
    if (u.replicasOf(nrs) !== u.replicasOf(d)) {
      const target = u.replicasOf(nrs) > u.replicasOf(d) ? u.replicasOf(d) : u.newRSNewReplicas(d, all, nrs);
      const r = await this.scaleAndRecord(nrs, target, d);
      if (r.scaled) {
        nrs = r.rs;
        return this.syncRolloutStatus([...oldRSs, nrs], nrs, d);
      }
    }
    // Scale down the old ones.
    const scaledDown = await this.reconcileOldReplicaSets(
      all,
      oldRSs.filter((r) => u.replicasOf(r) > 0),
      nrs,
      d,
    );
    if (scaledDown) return this.syncRolloutStatus([...oldRSs, nrs], nrs, d);
    all = [...oldRSs, nrs];
    if (u.deploymentComplete(d, d.status ?? {})) await this.cleanup(oldRSs, d);
    await this.syncRolloutStatus(all, nrs, d);
  }

  private async reconcileOldReplicaSets(all: RS[], oldRSs: RS[], newRS: RS, d: D): Promise<boolean> {
    if (u.sumReplicas(oldRSs) === 0) return false;
    const allPods = u.sumReplicas(all);
    const minAvailable = u.replicasOf(d) - u.maxUnavailable(d);
    const newUnavailable = u.replicasOf(newRS) - (newRS.status?.availableReplicas ?? 0);
    const maxScaledDown = allPods - minAvailable - newUnavailable;
    if (maxScaledDown <= 0) return false;
    // First the unhealthy replicas of old sets: scaling them down costs no availability.
    const sorted = [...oldRSs].sort(u.byCreation);
    let cleaned = 0;
    const current = new Map<string, RS>();
    for (const rs of sorted) {
      if (cleaned >= maxScaledDown) break;
      const avail = rs.status?.availableReplicas ?? 0;
      if (u.replicasOf(rs) === 0 || u.replicasOf(rs) === avail) continue;
      const n = Math.min(maxScaledDown - cleaned, u.replicasOf(rs) - avail);
      const r = await this.scaleAndRecord(rs, u.replicasOf(rs) - n, d);
      current.set(rs.metadata?.uid ?? '', r.rs);
      cleaned += n;
    }
    const olds = sorted.map((rs) => current.get(rs.metadata?.uid ?? '') ?? rs);
    // Then available ones, as far as maxUnavailable allows.
    const available = u.sumAvailable([...olds, newRS]);
    let scaled = 0;
    if (available > minAvailable) {
      const total = available - minAvailable;
      for (const rs of olds) {
        if (scaled >= total) break;
        if (u.replicasOf(rs) === 0) continue;
        const n = Math.min(u.replicasOf(rs), total - scaled);
        await this.scaleAndRecord(rs, u.replicasOf(rs) - n, d);
        scaled += n;
      }
    }
    return cleaned + scaled > 0;
  }

  // ---- Recreate ------------------------------------------------------------------------------------------------

  private async rolloutRecreate(d: D, rsList: RS[]): Promise<void> {
    let { newRS, oldRSs } = await this.getAllAndSyncRevision(d, rsList, false);
    let scaledDown = false;
    for (const rs of oldRSs) {
      if (u.replicasOf(rs) === 0) continue;
      const r = await this.scaleAndRecord(rs, 0, d);
      if (r.scaled) scaledDown = true;
    }
    const all = (): RS[] => (newRS ? [...oldRSs, newRS] : oldRSs);
    if (scaledDown) return this.syncRolloutStatus(all(), newRS, d);
    if (this.oldPodsRunning(newRS, oldRSs)) return this.syncRolloutStatus(all(), newRS, d);
    if (!newRS) ({ newRS, oldRSs } = await this.getAllAndSyncRevision(d, rsList, true));
    await this.scaleAndRecord(newRS!, u.replicasOf(d), d);
    if (u.deploymentComplete(d, d.status ?? {})) await this.cleanup(oldRSs, d);
    await this.syncRolloutStatus(all(), newRS, d);
  }

  private oldPodsRunning(newRS: RS | undefined, oldRSs: RS[]): boolean {
    if (u.sumStatusReplicas(oldRSs) > 0) return true;
    for (const rs of oldRSs) {
      if (newRS && rs.metadata?.uid === newRS.metadata?.uid) continue;
      for (const p of this.pods.indexer.byIndex(CONTROLLER_UID_INDEX, rs.metadata?.uid ?? '')) {
        const phase = p.status?.phase;
        if (phase !== 'Failed' && phase !== 'Succeeded') return true;
      }
    }
    return false;
  }

  // ---- Scaling (paused, or a change of spec.replicas) --------------------------------------------------------

  private async syncScaleOnly(d: D, rsList: RS[]): Promise<void> {
    const { newRS, oldRSs } = await this.getAllAndSyncRevision(d, rsList, false);
    await this.scale(d, newRS, oldRSs);
    if (d.spec?.paused) await this.cleanup(oldRSs, d);
    await this.syncDeploymentStatus(newRS ? [...oldRSs, newRS] : oldRSs, newRS, d);
  }

  private async scale(d: D, newRS: RS | undefined, oldRSs: RS[]): Promise<void> {
    const want = u.replicasOf(d);
    // One active (or no active and a latest) ReplicaSet takes the whole size.
    const newestFirst = [...oldRSs].sort((a, b) => -u.byCreation(a, b));
    const active = [...newestFirst, ...(newRS ? [newRS] : [])].filter((r) => u.replicasOf(r) > 0);
    let activeOrLatest: RS | undefined;
    if (active.length === 1) activeOrLatest = active[0];
    else if (active.length === 0) activeOrLatest = newRS ?? newestFirst[0];
    if (activeOrLatest || (!newRS && oldRSs.length === 0)) {
      if (activeOrLatest && u.replicasOf(activeOrLatest) !== want) await this.scaleAndRecord(activeOrLatest, want, d);
      return;
    }
    if (u.isSaturated(d, newRS)) {
      for (const rs of oldRSs.filter((r) => u.replicasOf(r) > 0)) await this.scaleAndRecord(rs, 0, d);
      return;
    }
    if ((d.spec?.strategy?.type ?? 'RollingUpdate') !== 'RollingUpdate') return;
    const all = [...oldRSs, ...(newRS ? [newRS] : [])].filter((r) => u.replicasOf(r) > 0);
    const allowed = want > 0 ? want + u.maxSurge(d) : 0;
    const toAdd = allowed - u.sumReplicas(all);
    const newer = (a: RS, b: RS): number => u.byCreation(b, a);
    if (toAdd > 0) all.sort((a, b) => u.replicasOf(b) - u.replicasOf(a) || newer(a, b));
    else if (toAdd < 0) all.sort((a, b) => u.replicasOf(b) - u.replicasOf(a) || u.byCreation(a, b));
    let added = 0;
    const size = new Map<RS, number>();
    for (const rs of all) {
      if (toAdd !== 0) {
        const p = u.proportion(rs, d, toAdd, added);
        size.set(rs, u.replicasOf(rs) + p);
        added += p;
      } else size.set(rs, u.replicasOf(rs));
    }
    if (toAdd !== 0 && all[0]) size.set(all[0], Math.max(0, (size.get(all[0]) ?? 0) + toAdd - added));
    for (const rs of all) await this.scaleRS(rs, size.get(rs) ?? u.replicasOf(rs), d);
  }

  // ---- Clean-up and status -----------------------------------------------------------------------------------

  private async cleanup(oldRSs: RS[], d: D): Promise<void> {
    const limit = d.spec?.revisionHistoryLimit;
    if (limit === undefined || limit === null) return;
    const cleanable = oldRSs.filter((rs) => !rs.metadata?.deletionTimestamp).sort(u.byRevision);
    const diff = cleanable.length - limit;
    if (diff <= 0) return;
    const client = this.rsClient.namespace(d.metadata?.namespace ?? '');
    for (const rs of cleanable.slice(0, diff)) {
      if ((rs.status?.replicas ?? 0) !== 0 || u.replicasOf(rs) !== 0) continue;
      if ((rs.metadata?.generation ?? 0) > (rs.status?.observedGeneration ?? 0)) continue;
      try {
        await client.delete(rs.metadata?.name ?? '', { signal: this.ctx.signal });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }

  private calculateStatus(all: RS[], newRS: RS | undefined, d: D): u.DeploymentStatus {
    const available = u.sumAvailable(all);
    const total = u.sumReplicas(all);
    const status: u.DeploymentStatus = {
      observedGeneration: d.metadata?.generation,
      replicas: u.sumStatusReplicas(all),
      updatedReplicas: u.sumStatusReplicas([newRS]),
      readyReplicas: u.sumReady(all),
      availableReplicas: available,
      unavailableReplicas: Math.max(0, total - available),
      ...(d.status?.collisionCount !== undefined ? { collisionCount: d.status.collisionCount } : {}),
      conditions: structuredClone(d.status?.conditions ?? []),
    };
    if (available >= u.replicasOf(d) - u.maxUnavailable(d))
      u.setCondition(
        status,
        u.newCondition('Available', 'True', u.MIN_AVAILABLE_REASON, 'Deployment has minimum availability.'),
      );
    else
      u.setCondition(
        status,
        u.newCondition(
          'Available',
          'False',
          u.MIN_UNAVAILABLE_REASON,
          'Deployment does not have minimum availability.',
        ),
      );
    return status;
  }

  private async syncStatusOnly(d: D, rsList: RS[]): Promise<void> {
    const { newRS, oldRSs } = await this.getAllAndSyncRevision(d, rsList, false);
    await this.syncDeploymentStatus(newRS ? [...oldRSs, newRS] : oldRSs, newRS, d);
  }

  private async syncDeploymentStatus(all: RS[], newRS: RS | undefined, d: D): Promise<void> {
    const status = this.calculateStatus(all, newRS, d);
    if (sameStatus(d.status, status)) return;
    d.status = status;
    await this.writeStatus(d);
  }

  private async syncRolloutStatus(all: RS[], newRS: RS | undefined, d: D): Promise<void> {
    const s = this.calculateStatus(all, newRS, d);
    if (!u.hasProgressDeadline(d)) u.removeCondition(s, 'Progressing');
    const cur = u.getCondition(s, 'Progressing');
    const complete = s.replicas === s.updatedReplicas && cur?.reason === u.NEW_RS_AVAILABLE_REASON;
    const name = newRS?.metadata?.name ?? '';
    if (u.hasProgressDeadline(d) && !complete) {
      if (u.deploymentComplete(d, s)) {
        const msg = newRS
          ? `ReplicaSet "${name}" has successfully progressed.`
          : 'Deployment has successfully progressed.';
        u.setCondition(s, u.newCondition('Progressing', 'True', u.NEW_RS_AVAILABLE_REASON, msg));
      } else if (u.deploymentProgressing(d, s)) {
        const msg = newRS ? `ReplicaSet "${name}" is progressing.` : 'Deployment is progressing.';
        const c = u.newCondition('Progressing', 'True', u.RS_UPDATED_REASON, msg);
        if (cur?.status === 'True') c.lastTransitionTime = cur.lastTransitionTime;
        u.removeCondition(s, 'Progressing');
        u.setCondition(s, c);
      } else if (u.deploymentTimedOut(d, s)) {
        const msg = newRS
          ? `ReplicaSet "${name}" has timed out progressing.`
          : `Deployment "${d.metadata?.name ?? ''}" has timed out progressing.`;
        u.setCondition(s, u.newCondition('Progressing', 'False', u.TIMED_OUT_REASON, msg));
      }
    }
    const failure = all
      .map((rs) => rs.status?.conditions?.find((c) => c.type === 'ReplicaFailure' && c.status === 'True'))
      .find((c) => c !== undefined);
    if (failure)
      u.setCondition(s, u.newCondition('ReplicaFailure', failure.status, failure.reason ?? '', failure.message ?? ''));
    else u.removeCondition(s, 'ReplicaFailure');
    if (sameStatus(d.status, s)) {
      this.requeueStuck(d, s);
      return;
    }
    d.status = s;
    await this.writeStatus(d);
  }

  /** A rollout in progress is looked at again when its progress deadline passes. */
  private requeueStuck(d: D, s: u.DeploymentStatus): void {
    const cur = u.getCondition(s, 'Progressing');
    if (!u.hasProgressDeadline(d) || !cur) return;
    if (u.deploymentComplete(d, s) || cur.reason === u.TIMED_OUT_REASON) return;
    const after = Date.parse(cur.lastUpdateTime ?? '') + (d.spec?.progressDeadlineSeconds ?? 0) * 1000 - Date.now();
    const key = metaNamespaceKey(d);
    if (Number.isNaN(after) || after < 1000) this.queue.addRateLimited(key);
    else this.queue.addAfter(key, after + 100);
  }
}

function sameStatus(a: u.DeploymentStatus | undefined, b: u.DeploymentStatus): boolean {
  const norm = (s: u.DeploymentStatus | undefined): string =>
    JSON.stringify({
      observedGeneration: s?.observedGeneration ?? 0,
      replicas: s?.replicas ?? 0,
      updatedReplicas: s?.updatedReplicas ?? 0,
      readyReplicas: s?.readyReplicas ?? 0,
      availableReplicas: s?.availableReplicas ?? 0,
      unavailableReplicas: s?.unavailableReplicas ?? 0,
      collisionCount: s?.collisionCount,
      conditions: (s?.conditions ?? []).map((c) => [
        c.type,
        c.status,
        c.reason,
        c.message,
        c.lastUpdateTime,
        c.lastTransitionTime,
      ]),
    });
  return norm(a) === norm(b);
}
