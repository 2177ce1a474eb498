/**
 * The volume plugins at the API level (1.21 `volumerestrictions`, `volumezone`, `nodevolumelimits`; VolumeBinding
 * is `volume-binding.ts`), reading PersistentVolumeClaims and PersistentVolumes from the informers:
 * - VolumeRestrictions: a GCE PD, AWS EBS, RBD or iSCSI disk already used on the node conflicts (GCE PDs may be
 *   shared when every use is read-only);
 * - VolumeZone: a bound volume's zone and region labels must match the node's;
 * - NodeVolumeLimits: the CSI volumes of each driver on the node (with the pod's) must not exceed the node's
 *   `attachable-volumes-csi-<driver>` allocatable.
 */
import { type PersistentVolume, type PersistentVolumeClaim, type Pod } from '@platform/api';

import { type NodeInfo } from '../../framework/node-info';
import {
  type ClusterEvent,
  type CycleState,
  type EnqueueExtensions,
  type FilterPlugin,
  type FrameworkHandle,
  type PluginFactory,
  type Status,
  unresolvable,
  unschedulable,
} from '../../framework/types';
import { claimNames, ERR_REASON_PV_NOT_EXIST, ERR_REASON_UNBOUND_IMMEDIATE } from './volume-binding';

export {
  ERR_REASON_BIND_CONFLICT,
  ERR_REASON_NODE_CONFLICT,
  ERR_REASON_PV_NOT_EXIST,
  ERR_REASON_UNBOUND_IMMEDIATE,
  VOLUME_BINDING,
  volumeBindingFactory,
} from './volume-binding';
export const VOLUME_RESTRICTIONS = 'VolumeRestrictions';
export const VOLUME_ZONE = 'VolumeZone';
export const NODE_VOLUME_LIMITS = 'NodeVolumeLimits';

export const ERR_REASON_DISK_CONFLICT = 'node(s) had no available disk';
export const ERR_REASON_ZONE_CONFLICT = 'node(s) had no available volume zone';
export const ERR_REASON_MAX_VOLUME_COUNT = 'node(s) exceed max volume count';

const ZONE_KEYS = [
  'topology.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/region',
];

type Volume = NonNullable<NonNullable<Pod['spec']>['volumes']>[number];

/** The bound PVs of the pod's claims; an error reason when a claim is missing or unbound. */
function boundVolumes(handle: FrameworkHandle, pod: Pod): { pvs: PersistentVolume[]; error?: string } {
  const ns = pod.metadata?.namespace ?? 'default';
  const pvcs = handle.lister('persistentvolumeclaims');
  const pvLister = handle.lister('persistentvolumes');
  const pvs: PersistentVolume[] = [];
  for (const name of claimNames(pod)) {
    const pvc = pvcs.get(`${ns}/${name}`) as PersistentVolumeClaim | undefined;
    if (!pvc) return { pvs, error: `persistentvolumeclaim "${name}" not found` };
    if (pvc.metadata?.deletionTimestamp) return { pvs, error: `persistentvolumeclaim "${name}" is being deleted` };
    const pvName = pvc.spec?.volumeName;
    if (!pvName) return { pvs, error: ERR_REASON_UNBOUND_IMMEDIATE };
    const pv = pvLister.get(pvName) as PersistentVolume | undefined;
    if (!pv) return { pvs, error: ERR_REASON_PV_NOT_EXIST };
    pvs.push(pv);
  }
  return { pvs };
}

const EVENTS: ClusterEvent[] = ['PvcAdd', 'PvcUpdate', 'PvAdd', 'PvUpdate', 'NodeAdd', 'NodeUpdate', 'StorageClassAdd'];

/** The identity of a disk that may not be mounted twice read-write, or undefined. */
function diskOf(v: Volume): { id: string; readOnly: boolean } | undefined {
  const x = v as unknown as Record<string, Record<string, unknown> | undefined>;
  if (x.gcePersistentDisk)
    return { id: `gce:${String(x.gcePersistentDisk.pdName)}`, readOnly: !!x.gcePersistentDisk.readOnly };
  if (x.awsElasticBlockStore) return { id: `aws:${String(x.awsElasticBlockStore.volumeID)}`, readOnly: false };
  if (x.rbd)
    return {
      id: `rbd:${String(x.rbd.pool ?? 'rbd')}/${String(x.rbd.image)}@${JSON.stringify(x.rbd.monitors ?? [])}`,
      readOnly: !!x.rbd.readOnly,
    };
  if (x.iscsi) return { id: `iscsi:${String(x.iscsi.iqn)}:${String(x.iscsi.lun)}`, readOnly: !!x.iscsi.readOnly };
  return undefined;
}

export class VolumeRestrictions implements FilterPlugin, EnqueueExtensions {
  readonly name = VOLUME_RESTRICTIONS;
  eventsToRegister(): ClusterEvent[] {
    return ['AssignedPodDelete'];
  }
  filter(_s: CycleState, pod: Pod, node: NodeInfo): Status | undefined {
    for (const v of pod.spec?.volumes ?? []) {
      const d = diskOf(v);
      if (!d) continue;
      for (const p of node.pods)
        for (const ev of p.pod.spec?.volumes ?? []) {
          const e = diskOf(ev);
          // GCE PDs may be shared read-only; the others conflict on any reuse.
          if (e && e.id === d.id && !(d.id.startsWith('gce:') && d.readOnly && e.readOnly))
            return unschedulable(ERR_REASON_DISK_CONFLICT);
        }
    }
    return undefined;
  }
}

export class VolumeZone implements FilterPlugin, EnqueueExtensions {
  readonly name = VOLUME_ZONE;
  constructor(private readonly handle: FrameworkHandle) {}
  eventsToRegister(): ClusterEvent[] {
    return EVENTS;
  }
  filter(_s: CycleState, pod: Pod, node: NodeInfo): Status | undefined {
    if (!claimNames(pod).length) return undefined;
    const { pvs } = boundVolumes(this.handle, pod);
    const labels = node.node?.metadata?.labels ?? {};
    for (const pv of pvs)
      for (const k of ZONE_KEYS) {
        const want = pv.metadata?.labels?.[k];
        if (want === undefined) continue;
        const allowed = new Set(want.split('__'));
        const have = labels[k];
        if (have === undefined || !allowed.has(have)) return unresolvable(ERR_REASON_ZONE_CONFLICT);
      }
    return undefined;
  }
}

export class NodeVolumeLimits implements FilterPlugin, EnqueueExtensions {
  readonly name = NODE_VOLUME_LIMITS;
  constructor(private readonly handle: FrameworkHandle) {}
  eventsToRegister(): ClusterEvent[] {
    return ['AssignedPodDelete', 'NodeAdd', 'NodeUpdate', 'PvcAdd', 'PvAdd'];
  }
  private csiVolumes(pod: Pod, into: Map<string, Set<string>>): void {
    const { pvs } = boundVolumes(this.handle, pod);
    for (const pv of pvs) {
      const csi = pv.spec?.csi;
      if (!csi?.driver) continue;
      let s = into.get(csi.driver);
      if (!s) into.set(csi.driver, (s = new Set()));
      s.add(csi.volumeHandle ?? pv.metadata?.name ?? '');
    }
  }
  filter(_s: CycleState, pod: Pod, node: NodeInfo): Status | undefined {
    if (!claimNames(pod).length) return undefined;
    const mine = new Map<string, Set<string>>();
    this.csiVolumes(pod, mine);
    if (!mine.size) return undefined;
    const used = new Map<string, Set<string>>();
    for (const p of node.pods) if (claimNames(p.pod).length) this.csiVolumes(p.pod, used);
    for (const [driver, vols] of mine) {
      const limit = node.allocatable.scalar?.get(`attachable-volumes-csi-${driver}`);
      if (limit === undefined) continue;
      const all = new Set([...(used.get(driver) ?? []), ...vols]);
      if (all.size > limit) return unschedulable(ERR_REASON_MAX_VOLUME_COUNT);
    }
    return undefined;
  }
}

export const volumeRestrictionsFactory: PluginFactory = () => new VolumeRestrictions();
export const volumeZoneFactory: PluginFactory = (_a, h) => new VolumeZone(h);
export const nodeVolumeLimitsFactory: PluginFactory = (_a, h) => new NodeVolumeLimits(h);
