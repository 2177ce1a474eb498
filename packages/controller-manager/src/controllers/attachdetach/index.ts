/**
 * The attach/detach controller (model: Kubernetes 1.21 `pkg/controller/volume/attachdetach`). Attaching a volume
 * to the node of a pod that uses it needs a volume plugin: in-tree ones (none exist on this platform) or CSI,
 * through VolumeAttachment objects of `storage.platform`. That group is not served by this API server (checked at
 * start), so nothing can be attached: the controller says so once in the log, and each scheduled pod with an
 * attachable volume (a CSI persistent volume, or an in-tree attachable source) gets one Warning Event
 * FailedAttachVolume per volume. Pods are looked at when they change and, unless
 * `--disable-attach-detach-reconcile-sync`, every `--attach-detach-reconcile-sync-period` (1.21's reconciler).
 */
import {
  type PersistentVolume,
  type PersistentVolumeClaim,
  PersistentVolumeClaimKind,
  PersistentVolumeKind,
  type Pod,
  PodKind,
} from '@platform/api';
import { boolFlag, durationFlag, type FlagDef } from '@platform/common';

import { type ControllerContext, type ControllerDefinition, ControllerOptions } from '../../controller';
import { waitForSynced } from '../util/wait-synced';

/** The values of the attach/detach controller's options (ms). */
export interface AttachDetachConfig {
  reconcileSyncPeriodMs: number;
  disableReconcileSync: boolean;
}

/** `--attach-detach-reconcile-sync-period`, `--disable-attach-detach-reconcile-sync`. */
export class AttachDetachOptions extends ControllerOptions<AttachDetachConfig> {
  private readonly v: AttachDetachConfig = { reconcileSyncPeriodMs: 60_000, disableReconcileSync: false };

  constructor() {
    super('Attach detach controller');
  }

  protected flagDefs(): FlagDef[] {
    return [
      durationFlag(
        'attach-detach-reconcile-sync-period',
        'The reconciler sync wait time between volume attach detach. This duration must be larger than one second, and increasing this value from the default may allow for volumes to be mismatched with pods.',
        this.v.reconcileSyncPeriodMs,
        (x) => (this.v.reconcileSyncPeriodMs = x),
      ),
      boolFlag(
        'disable-attach-detach-reconcile-sync',
        'Disable volume attach detach reconciler sync. Disabling this may cause volumes to be mismatched with pods. Use wisely.',
        this.v.disableReconcileSync,
        (x) => (this.v.disableReconcileSync = x),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    // 1.21: "duration time must be greater than one second as set via command line option reconcile-sync-loop-period".
    return this.v.reconcileSyncPeriodMs < 1000
      ? [new Error('--attach-detach-reconcile-sync-period must be at least one second')]
      : [];
  }

  values(): AttachDetachConfig {
    return { ...this.v };
  }
}

/** In-tree persistent volume sources that 1.21 attaches to nodes. */
const IN_TREE_ATTACHABLE = [
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'azureDisk',
  'cinder',
  'vsphereVolume',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'rbd',
  'iscsi',
  'fc',
  'flexVolume',
] as const;

/** Why a volume of a scheduled pod cannot be attached, or undefined when it needs no attaching. */
export function attachProblem(pv: PersistentVolume): string | undefined {
  if (pv.spec?.csi)
    return `AttachVolume.Attach failed for volume "${pv.metadata?.name}" : VolumeAttachment objects are not served by the API server (storage.platform), so CSI driver "${pv.spec.csi.driver}" cannot attach it`;
  const spec = pv.spec as Record<string, unknown> | undefined;
  const src = IN_TREE_ATTACHABLE.find((k) => spec?.[k] !== undefined);
  if (src)
    return `AttachVolume.FindAttachablePluginBySpec failed for volume "${pv.metadata?.name}": no in-tree volume plugin exists for ${src}`;
  return undefined;
}

/** Asks the API server whether `storage.platform` is served. */
async function storageGroupServed(ctx: ControllerContext): Promise<boolean> {
  try {
    await ctx.client
      .resource(PodKind)
      .rest.request({ method: 'GET', path: '/apis/storage.platform', signal: ctx.signal });
    return true;
  } catch {
    return false;
  }
}

async function run(ctx: ControllerContext, o: AttachDetachConfig): Promise<void> {
  const pods = ctx.informers.informerFor(PodKind);
  const claims = ctx.informers.informerFor(PersistentVolumeClaimKind);
  const volumes = ctx.informers.informerFor(PersistentVolumeKind);
  /** `podUID/volume` of the Events recorded. */
  const told = new Set<string>();
  const look = (pod: Pod): void => {
    if (!pod.spec?.nodeName || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return;
    const ns = pod.metadata?.namespace ?? '';
    for (const v of pod.spec.volumes ?? []) {
      const claimName =
        v.persistentVolumeClaim?.claimName ?? (v.ephemeral ? `${pod.metadata?.name}-${v.name}` : undefined);
      if (!claimName) continue;
      const c: PersistentVolumeClaim | undefined = claims.indexer.get(`${ns}/${claimName}`);
      const pv: PersistentVolume | undefined = c?.spec?.volumeName ? volumes.indexer.get(c.spec.volumeName) : undefined;
      const problem = pv && attachProblem(pv);
      const key = `${pod.metadata?.uid}/${v.name}`;
      if (!problem || told.has(key)) continue;
      told.add(key);
      ctx.recorder.event(pod, 'Warning', 'FailedAttachVolume', problem);
    }
  };
  pods.addEventHandler({
    onAdd: look,
    onUpdate: (_o, p) => look(p),
    onDelete: (p) => {
      const uid = (p as Pod).metadata?.uid;
      for (const k of told) if (k.startsWith(`${uid}/`)) told.delete(k);
    },
  });
  if (!(await waitForSynced(ctx.signal, [pods, claims, volumes]))) return;
  const served = await storageGroupServed(ctx);
  ctx.logger.info(
    served
      ? 'No in-tree volume plugin exists; storage.platform is served, but VolumeAttachment objects are not written yet: volumes are not attached'
      : 'No in-tree volume plugin exists, and storage.platform (VolumeAttachment) is not served: volumes are not attached; pods with attachable volumes get a FailedAttachVolume Event',
  );
  const reconcile = (): void => {
    for (const p of pods.indexer.list()) look(p);
  };
  reconcile();
  const timer = o.disableReconcileSync ? undefined : setInterval(reconcile, o.reconcileSyncPeriodMs);
  if (!ctx.signal.aborted) await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
  if (timer) clearInterval(timer);
}

/** The `attachdetach` controller. */
export const attachDetachController: ControllerDefinition<AttachDetachConfig> = {
  name: 'attachdetach',
  enabledByDefault: true,
  serviceAccount: 'attachdetach-controller',
  options: () => new AttachDetachOptions(),
  run,
};
