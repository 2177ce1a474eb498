/**
 * The persistent volume binder (model: Kubernetes 1.21 `pkg/controller/volume/persistentvolume/pv_controller.go`).
 * It binds each Pending PersistentVolumeClaim to the smallest matching Available PersistentVolume
 * (`findMatchingVolume` of @platform/api; `spec.volumeName` on the claim and `spec.claimRef` on the volume pre-bind
 * them), keeps both phases right (claims Pending/Bound/Lost, volumes Available/Bound/Released/Failed) and reclaims
 * released volumes: Retain keeps them Released, Delete needs the volume's plugin (below), Recycle is not done (no
 * recycler pods), so the volume goes Failed with an Event saying so.
 *
 * A claim of a StorageClass that no volume matches is provisioned (`--enable-dynamic-provisioning`): a class of the
 * in-tree `kubernetes.io/host-path` provisioner gets a hostPath volume made here (`host-path.ts`, only with
 * `--enable-hostpath-provisioner`, which is also what lets the binder delete such volumes); a class of any other
 * provisioner not under `kubernetes.io/` is an external provisioner's: the claim gets the
 * `volume.beta.kubernetes.io/storage-provisioner` annotation and an `ExternalProvisioning` Event, and the
 * provisioner makes the volume (and deletes it). A claim of a `WaitForFirstConsumer` class waits, with an Event,
 * until the scheduler writes the node it chose into `volume.kubernetes.io/selected-node` (or pre-binds a volume).
 *
 * One worker syncs claims and volumes in turn (1.21 has a worker each; one keeps our own writes ordered). Writes
 * go into a local overlay of the informers' caches (1.21's `storeObjectUpdate`), so a sync right after a bind
 * sees the bind even when the informer has not delivered it yet. Everything is synced again every
 * `--pvclaimbinder-sync-period`.
 */
import {
  ANN_BIND_COMPLETED,
  ANN_BOUND_BY_CONTROLLER,
  ANN_PROVISIONED_BY,
  ANN_SELECTED_NODE,
  type ApiObject,
  bindVolumeToClaim,
  claimClass,
  findMatchingVolume,
  isBoundTo,
  isConflict,
  isNotFound,
  type PersistentVolume,
  type PersistentVolumeClaim,
  PersistentVolumeClaimKind,
  PersistentVolumeKind,
  type Pod,
  PodKind,
  StorageClassKind,
  volumeModeMismatch,
} from '@platform/api';
import { isDeletedFinalStateUnknown, metaNamespaceKey, NAMESPACE_INDEX, runWorkers, WorkQueue } from '@platform/client';
import { boolFlag, durationFlag, type FlagDef, intFlag, stringFlag } from '@platform/common';

import { type ControllerContext, type ControllerDefinition, ControllerOptions } from '../../controller';
import { waitForSynced } from '../util/wait-synced';
import { DEFAULT_HOST_PATH_ROOT, deleteHostPath, HOST_PATH_PLUGIN } from './host-path';
import { Provisioner } from './provisioner';

export { ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_PROVISIONED_BY };

/** The values of the binder's options. */
export interface PersistentVolumeBinderConfig {
  /** `--pvclaimbinder-sync-period` (ms). */
  syncPeriodMs: number;
  /** `--enable-dynamic-provisioning`. */
  enableDynamicProvisioning: boolean;
  /** `--enable-hostpath-provisioner`: the host-path plugin provisions and deletes volumes. */
  enableHostPathProvisioner: boolean;
  /**
   * Where the host-path provisioner makes its directories: 1.21's fixed `/tmp/hostpath_pv` (no option of
   * Document 2 sets it; tests give their own temporary directory).
   */
  hostPathRoot: string;
}

/** Recycler flags: accepted at their defaults; volumes are never recycled here (no recycler pods). */
const RECYCLER_INTS: [string, number, string][] = [
  [
    'pv-recycler-increment-timeout-nfs',
    30,
    'the increment of time added per Gi to ActiveDeadlineSeconds for an NFS scrubber pod',
  ],
  [
    'pv-recycler-minimum-timeout-hostpath',
    60,
    'The minimum ActiveDeadlineSeconds to use for a HostPath Recycler pod. This is for development and testing only.',
  ],
  ['pv-recycler-minimum-timeout-nfs', 300, 'The minimum ActiveDeadlineSeconds to use for an NFS Recycler pod'],
  [
    'pv-recycler-timeout-increment-hostpath',
    30,
    'the increment of time added per Gi to ActiveDeadlineSeconds for a HostPath scrubber pod. This is for development and testing only.',
  ],
];

/** `--pvclaimbinder-sync-period`, `--enable-dynamic-provisioning`, `--enable-hostpath-provisioner`, `--pv-recycler-*`. */
export class PersistentVolumeBinderOptions extends ControllerOptions<PersistentVolumeBinderConfig> {
  syncPeriodMs = 15_000;
  enableDynamicProvisioning = true;
  enableHostPathProvisioner = false;
  recyclerInts = new Map<string, number>(RECYCLER_INTS.map(([n, d]) => [n, d]));
  recyclerTemplates = new Map<string, string>([
    ['pv-recycler-pod-template-filepath-hostpath', ''],
    ['pv-recycler-pod-template-filepath-nfs', ''],
  ]);

  constructor() {
    super('Persistent volume binder controller');
  }

  protected flagDefs(): FlagDef[] {
    return [
      durationFlag(
        'pvclaimbinder-sync-period',
        'The period for syncing persistent volumes and persistent volume claims',
        this.syncPeriodMs,
        (v) => (this.syncPeriodMs = v),
      ),
      boolFlag(
        'enable-dynamic-provisioning',
        'Enable dynamic provisioning for environments that support it.',
        this.enableDynamicProvisioning,
        (v) => (this.enableDynamicProvisioning = v),
      ),
      boolFlag(
        'enable-hostpath-provisioner',
        "Enable HostPath PV provisioning when running without a cloud provider. This allows testing and development of provisioning features. HostPath provisioning is not supported in any way, won't work in a multi-node cluster, and should not be used for anything other than testing or development.",
        this.enableHostPathProvisioner,
        (v) => (this.enableHostPathProvisioner = v),
      ),
      ...RECYCLER_INTS.map(([name, dflt, usage]) =>
        intFlag(name, usage, dflt, (v) => this.recyclerInts.set(name, v), { type: 'int32' }),
      ),
      ...[...this.recyclerTemplates.keys()].map((name) =>
        stringFlag(
          name,
          `The file path to a pod definition used as a template for ${name.endsWith('nfs') ? 'NFS' : 'HostPath'} persistent volume recycling`,
          '',
          (v) => this.recyclerTemplates.set(name, v),
        ),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    const errs: Error[] = [];
    if (this.syncPeriodMs <= 0) errs.push(new Error('--pvclaimbinder-sync-period must be greater than 0'));
    for (const [name, dflt] of RECYCLER_INTS)
      if (this.recyclerInts.get(name) !== dflt)
        errs.push(new Error(`--${name}: not supported yet (volumes are not recycled: there are no recycler pods)`));
    for (const [name, v] of this.recyclerTemplates)
      if (v !== '')
        errs.push(new Error(`--${name}: not supported yet (volumes are not recycled: there are no recycler pods)`));
    return errs;
  }

  values(): PersistentVolumeBinderConfig {
    return {
      syncPeriodMs: this.syncPeriodMs,
      enableDynamicProvisioning: this.enableDynamicProvisioning,
      enableHostPathProvisioner: this.enableHostPathProvisioner,
      hostPathRoot: DEFAULT_HOST_PATH_ROOT,
    };
  }
}

/** The newer of two versions of an object (by resourceVersion, a decimal revision). */
function newer<T extends ApiObject>(a: T | undefined, b: T | undefined): T | undefined {
  if (!a || !b) return a ?? b;
  try {
    return BigInt(a.metadata?.resourceVersion ?? '0') >= BigInt(b.metadata?.resourceVersion ?? '0') ? a : b;
  } catch {
    return a;
  }
}

/** The names of the claims a pod uses: its persistentVolumeClaim volumes and its ephemeral volumes' claims. */
function podClaimNames(pod: Pod): string[] {
  const names: string[] = [];
  for (const v of pod.spec?.volumes ?? []) {
    if (v.persistentVolumeClaim?.claimName) names.push(v.persistentVolumeClaim.claimName);
    else if ((v as { ephemeral?: unknown }).ephemeral) names.push(`${pod.metadata?.name}-${v.name}`);
  }
  return names;
}

class Binder {
  private readonly claims;
  private readonly volumes;
  private readonly classes;
  private readonly pods;
  private readonly provisioner: Provisioner;
  readonly queue: WorkQueue<string>;
  /** Objects as this controller last wrote them, by key: newer than the cache until the informer catches up. */
  private readonly written = new Map<string, ApiObject>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly o: PersistentVolumeBinderConfig,
  ) {
    this.claims = ctx.informers.informerFor(PersistentVolumeClaimKind);
    this.volumes = ctx.informers.informerFor(PersistentVolumeKind);
    this.classes = ctx.informers.informerFor(StorageClassKind);
    this.pods = ctx.informers.informerFor(PodKind);
    this.provisioner = new Provisioner(ctx, o, {
      storageClass: (name) => this.classes.indexer.get(name),
      writeClaim: (c) => this.writeClaim(c),
      rememberVolume: (pv) => this.written.set(`volume:${pv.metadata!.name}`, pv),
    });
    this.queue = new WorkQueue<string>({ name: 'persistentvolume-binder', metrics: ctx.metrics });
    const onClaim = (c: PersistentVolumeClaim): void => this.queue.add(`claim:${metaNamespaceKey(c)}`);
    const onVolume = (pv: PersistentVolume): void => this.queue.add(`volume:${metaNamespaceKey(pv)}`);
    this.claims.addEventHandler({
      onAdd: onClaim,
      onUpdate: (_o, c) => onClaim(c),
      onDelete: (c) => {
        const d = (isDeletedFinalStateUnknown(c) ? c.obj : c) as PersistentVolumeClaim;
        this.written.delete(`claim:${metaNamespaceKey(d)}`);
        // Its volume is released.
        if (d.spec?.volumeName) this.queue.add(`volume:${d.spec.volumeName}`);
      },
    });
    this.volumes.addEventHandler({
      onAdd: onVolume,
      onUpdate: (_o, pv) => onVolume(pv),
      onDelete: (pv) => {
        const d = (isDeletedFinalStateUnknown(pv) ? pv.obj : pv) as PersistentVolume;
        this.written.delete(`volume:${metaNamespaceKey(d)}`);
        const r = d.spec?.claimRef;
        if (r?.name) this.queue.add(`claim:${r.namespace}/${r.name}`);
      },
    });
  }

  synced(): Promise<boolean> {
    return waitForSynced(this.ctx.signal, [this.claims, this.volumes, this.classes, this.pods]);
  }

  resyncAll(): void {
    for (const c of this.claims.indexer.list()) this.queue.add(`claim:${metaNamespaceKey(c)}`);
    for (const pv of this.volumes.indexer.list()) this.queue.add(`volume:${metaNamespaceKey(pv)}`);
  }

  private claim(key: string): PersistentVolumeClaim | undefined {
    const cached = this.claims.indexer.get(key);
    if (!cached) return undefined;
    return newer(cached, this.written.get(`claim:${key}`) as PersistentVolumeClaim | undefined);
  }

  private volume(name: string): PersistentVolume | undefined {
    const cached = this.volumes.indexer.get(name);
    if (!cached) return undefined;
    return newer(cached, this.written.get(`volume:${name}`) as PersistentVolume | undefined);
  }

  private allVolumes(): PersistentVolume[] {
    return this.volumes.indexer.list().map((pv) => this.volume(pv.metadata!.name!)!);
  }

  async sync(item: string): Promise<void> {
    const i = item.indexOf(':');
    const key = item.slice(i + 1);
    try {
      if (item.startsWith('claim:')) {
        const c = this.claim(key);
        if (c) await this.syncClaim(c);
      } else {
        const pv = this.volume(key);
        if (pv) await this.syncVolume(pv);
      }
    } catch (err) {
      // The cache was behind a write of someone else: sync again once it has caught up.
      if (isConflict(err)) {
        this.written.delete(item);
        this.queue.addRateLimited(item);
        return;
      }
      if (isNotFound(err)) return;
      throw err;
    }
  }

  // ---- writes, remembered in the overlay ----

  private async writeClaim(c: PersistentVolumeClaim, status = false): Promise<PersistentVolumeClaim> {
    const api = this.ctx.client.resource(PersistentVolumeClaimKind).namespace(c.metadata!.namespace!);
    const out = status
      ? await api.updateStatus(c, { signal: this.ctx.signal })
      : await api.update(c, { signal: this.ctx.signal });
    this.written.set(`claim:${metaNamespaceKey(out)}`, out);
    return out;
  }

  private async writeVolume(pv: PersistentVolume, status = false): Promise<PersistentVolume> {
    const api = this.ctx.client.resource(PersistentVolumeKind);
    const out = status
      ? await api.updateStatus(pv, { signal: this.ctx.signal })
      : await api.update(pv, { signal: this.ctx.signal });
    this.written.set(`volume:${out.metadata!.name}`, out);
    return out;
  }

  private async claimPhase(
    c: PersistentVolumeClaim,
    phase: string,
    pv?: PersistentVolume,
  ): Promise<PersistentVolumeClaim> {
    const status = { ...c.status, phase } as NonNullable<PersistentVolumeClaim['status']>;
    if (pv) {
      status.accessModes = pv.spec?.accessModes;
      status.capacity = pv.spec?.capacity;
    }
    if (phase === 'Pending') {
      delete status.accessModes;
      delete status.capacity;
    }
    if (JSON.stringify(status) === JSON.stringify(c.status)) return c;
    return this.writeClaim({ ...c, status }, true);
  }

  private async volumePhase(pv: PersistentVolume, phase: string, message?: string): Promise<PersistentVolume> {
    if (pv.status?.phase === phase && (message === undefined || pv.status?.message === message)) return pv;
    const status = { ...pv.status, phase, message } as NonNullable<PersistentVolume['status']>;
    if (message === undefined) delete status.message;
    return this.writeVolume({ ...pv, status }, true);
  }

  // ---- claims ----

  private async syncClaim(c: PersistentVolumeClaim): Promise<void> {
    if (!c.metadata?.annotations?.[ANN_BIND_COMPLETED]) await this.syncUnboundClaim(c);
    else await this.syncBoundClaim(c);
  }

  private async syncUnboundClaim(c: PersistentVolumeClaim): Promise<void> {
    if (!c.spec?.volumeName) {
      const delayBinding = this.provisioner.isDelayBinding(c);
      const pv = findMatchingVolume(c, this.allVolumes(), { delayBinding });
      if (!pv) {
        if (delayBinding && c.metadata?.annotations?.[ANN_SELECTED_NODE] === undefined) this.waitingForConsumer(c);
        else await this.noVolumeFor(c);
        await this.claimPhase(this.claim(metaNamespaceKey(c)) ?? c, 'Pending');
        return;
      }
      await this.bind(pv, c);
      return;
    }
    // Pre-bound by the user to spec.volumeName.
    const pv = this.volume(c.spec.volumeName);
    if (!pv) {
      await this.claimPhase(c, 'Pending');
      return;
    }
    if (!pv.spec?.claimRef || isBoundTo(pv, c)) {
      if (volumeModeMismatch(c, pv)) {
        this.ctx.recorder.event(
          c,
          'Warning',
          'VolumeMismatch',
          'Cannot bind to requested volume: volume mode mismatch',
        );
        await this.claimPhase(c, 'Pending');
        return;
      }
      await this.bind(pv, c);
      return;
    }
    this.ctx.recorder.event(
      c,
      'Warning',
      'FailedBinding',
      `volume "${pv.metadata?.name}" already bound to a different claim.`,
    );
    await this.claimPhase(c, 'Pending');
  }

  private async syncBoundClaim(c: PersistentVolumeClaim): Promise<void> {
    const name = c.spec?.volumeName ?? '';
    const pv = name ? this.volume(name) : undefined;
    if (!pv) {
      if (c.status?.phase !== 'Lost')
        this.ctx.recorder.event(
          c,
          'Warning',
          'ClaimLost',
          'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!',
        );
      await this.claimPhase(c, 'Lost');
      return;
    }
    if (!pv.spec?.claimRef || isBoundTo(pv, c)) {
      // Finish (or repair) the bind on both sides.
      await this.bind(pv, c);
      return;
    }
    if (c.status?.phase !== 'Lost')
      this.ctx.recorder.event(
        c,
        'Warning',
        'ClaimMisbound',
        'Two claims are bound to the same volume, this one is bound incorrectly',
      );
    await this.claimPhase(c, 'Lost');
  }

  /** A claim no volume matches: provisioned when it has a class, else 1.21's Event. */
  private async noVolumeFor(c: PersistentVolumeClaim): Promise<void> {
    if (claimClass(c) !== '') {
      await this.provisioner.provisionClaim(c);
      return;
    }
    this.ctx.recorder.event(
      c,
      'Normal',
      'FailedBinding',
      'no persistent volumes available for this claim and no storage class is set',
    );
  }

  /**
   * A claim of a `WaitForFirstConsumer` class before the scheduler chose a node (1.21
   * `emitEventForUnboundDelayBindingClaim`): which pods it waits for, if any use it yet.
   */
  private waitingForConsumer(c: PersistentVolumeClaim): void {
    const waiting = this.pods.indexer
      .byIndex(NAMESPACE_INDEX, c.metadata?.namespace ?? '')
      .filter(
        (p) =>
          !p.spec?.nodeName &&
          p.status?.phase !== 'Succeeded' &&
          p.status?.phase !== 'Failed' &&
          podClaimNames(p).includes(c.metadata?.name ?? ''),
      )
      .map((p) => p.metadata?.name ?? '');
    if (waiting.length === 0) {
      this.ctx.recorder.event(
        c,
        'Normal',
        'WaitForFirstConsumer',
        'waiting for first consumer to be created before binding',
      );
      return;
    }
    const message =
      waiting.length > 1
        ? `waiting for pods ${waiting.join(',')} to be scheduled`
        : `waiting for pod ${waiting[0]} to be scheduled`;
    this.ctx.recorder.event(c, 'Normal', 'WaitForPodScheduled', message);
  }

  /** Binds `pv` and `c` to each other (1.21's `bind`): the volume's claimRef and phase, then the claim's. */
  private async bind(pv: PersistentVolume, c: PersistentVolumeClaim): Promise<void> {
    let volume = pv;
    const next = bindVolumeToClaim(volume, c);
    if (next !== volume) volume = await this.writeVolume(next);
    volume = await this.volumePhase(volume, 'Bound');

    let claim = c;
    const ann = claim.metadata?.annotations ?? {};
    if (claim.spec?.volumeName !== volume.metadata?.name || ann[ANN_BIND_COMPLETED] !== 'yes') {
      const next = structuredClone(claim);
      const annotations: Record<string, string> = { ...ann, [ANN_BIND_COMPLETED]: 'yes' };
      if (!claim.spec?.volumeName) annotations[ANN_BOUND_BY_CONTROLLER] = 'yes';
      next.metadata = { ...next.metadata, annotations };
      next.spec = { ...next.spec, volumeName: volume.metadata?.name };
      claim = await this.writeClaim(next);
    }
    await this.claimPhase(claim, 'Bound', volume);
  }

  // ---- volumes ----

  private async syncVolume(pv: PersistentVolume): Promise<void> {
    const ref = pv.spec?.claimRef;
    if (!ref) {
      await this.volumePhase(pv, 'Available');
      return;
    }
    if (!ref.uid) {
      // Pre-bound by the user; waits for the claim's sync to bind it.
      await this.volumePhase(pv, 'Available');
      if (ref.name) this.queue.add(`claim:${ref.namespace}/${ref.name}`);
      return;
    }
    const key = `${ref.namespace}/${ref.name}`;
    let c = this.claim(key);
    if (!c || c.metadata?.uid !== ref.uid) {
      // The cache may be behind a just-created claim: ask the API server before releasing the volume.
      try {
        c = await this.ctx.client
          .resource(PersistentVolumeClaimKind)
          .namespace(ref.namespace ?? '')
          .get(ref.name ?? '', { signal: this.ctx.signal });
      } catch (err) {
        if (!isNotFound(err)) throw err;
        c = undefined;
      }
    }
    if (!c || c.metadata?.uid !== ref.uid) {
      await this.released(pv);
      return;
    }
    if (!c.spec?.volumeName) {
      // Bound on our side only: the claim's sync finishes the bind.
      this.queue.add(`claim:${key}`);
      return;
    }
    if (c.spec.volumeName === pv.metadata?.name) {
      await this.volumePhase(pv, 'Bound');
      return;
    }
    // The claim is bound to another volume: this one is free again.
    const next = structuredClone(pv);
    if (next.metadata?.annotations?.[ANN_BOUND_BY_CONTROLLER]) {
      delete next.spec!.claimRef;
      delete next.metadata.annotations[ANN_BOUND_BY_CONTROLLER];
    } else {
      next.spec!.claimRef = { ...next.spec!.claimRef, uid: '' };
    }
    await this.volumePhase(await this.writeVolume(next), 'Available');
  }

  /**
   * Deletes a released volume of reclaim policy Delete (1.21 `deleteVolumeOperation`): its storage through the
   * plugin that made it, then the object. An external provisioner's volume is left to it; one without a plugin here
   * goes Failed with an Event (and is not retried, unlike 1.21, which has plugins that may succeed later).
   */
  private async deleteVolume(volume: PersistentVolume): Promise<void> {
    const name = volume.metadata?.name ?? '';
    const by = volume.metadata?.annotations?.[ANN_PROVISIONED_BY];
    // A volume of an external provisioner is deleted by it.
    if (by && by !== HOST_PATH_PLUGIN && !by.startsWith('kubernetes.io/')) return;
    if (!this.o.enableHostPathProvisioner || !volume.spec?.hostPath) {
      const msg = `error getting deleter volume plugin for volume "${name}": no deletable volume plugin matched${
        volume.spec?.hostPath ? ' (the host-path plugin deletes only with --enable-hostpath-provisioner)' : ''
      }`;
      this.ctx.recorder.event(volume, 'Warning', 'VolumeFailedDelete', msg);
      await this.volumePhase(volume, 'Failed', msg);
      return;
    }
    try {
      await deleteHostPath(volume, this.o.hostPathRoot);
    } catch (err) {
      const msg = (err as Error).message;
      this.ctx.recorder.event(volume, 'Warning', 'VolumeFailedDelete', msg);
      await this.volumePhase(volume, 'Failed', msg);
      return;
    }
    try {
      await this.ctx.client.resource(PersistentVolumeKind).delete(name, { signal: this.ctx.signal });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /** The claim of `pv` is gone: Released, then its reclaim policy (1.21's `reclaimVolume`). */
  private async released(pv: PersistentVolume): Promise<void> {
    if (pv.status?.phase === 'Failed') return;
    let volume = pv;
    if (volume.status?.phase !== 'Released') volume = await this.volumePhase(volume, 'Released');
    const policy = volume.spec?.persistentVolumeReclaimPolicy ?? 'Retain';
    if (policy === 'Retain') return;
    if (policy === 'Delete') {
      await this.deleteVolume(volume);
      return;
    }
    const msg = 'No recycler plugin found for the volume!';
    this.ctx.recorder.event(volume, 'Warning', 'VolumeFailedRecycle', msg);
    await this.volumePhase(volume, 'Failed', msg);
  }
}

async function run(ctx: ControllerContext, o: PersistentVolumeBinderConfig): Promise<void> {
  const b = new Binder(ctx, o);
  ctx.signal.addEventListener('abort', () => b.queue.shutDown(), { once: true });
  if (!(await b.synced())) return;
  if (o.enableHostPathProvisioner)
    ctx.logger.info('HostPath provisioning is enabled: for testing on a single-node cluster only', {
      root: o.hostPathRoot,
    });
  const timer = setInterval(() => b.resyncAll(), o.syncPeriodMs);
  try {
    await runWorkers(
      b.queue,
      1,
      (k) => b.sync(k),
      (key, err) => {
        if (!ctx.signal.aborted) ctx.logger.info('Failed to sync, retrying', { key, error: String(err) });
      },
    );
  } finally {
    clearInterval(timer);
  }
}

/** The `persistentvolume-binder` controller. */
export const persistentVolumeBinderController: ControllerDefinition<PersistentVolumeBinderConfig> = {
  name: 'persistentvolume-binder',
  enabledByDefault: true,
  serviceAccount: 'persistent-volume-binder',
  options: () => new PersistentVolumeBinderOptions(),
  run,
};
