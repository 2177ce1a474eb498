/**
 * The in-tree host-path volume plugin's provisioner and deleter (model: Kubernetes 1.21 `pkg/volume/hostpath/
 * host_path.go`), the only in-tree provisioner of this platform. A provisioned volume is a directory
 * `<root>/<uuid>` on the controller manager's machine (1.21's `/tmp/hostpath_pv/<uuid>`), which is why 1.21 allows
 * it only on single-node test clusters (`--enable-hostpath-provisioner`). Unlike 1.21, a volume provisioned for a
 * node the scheduler selected (`WaitForFirstConsumer`) gets node affinity to that node, so its pods stay there.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import {
  ANN_BOUND_BY_CONTROLLER,
  ANN_PROVISIONED_BY,
  claimReference,
  type Node,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type StorageClass,
} from '@platform/api';

/** The plugin's name, as a StorageClass's `provisioner` and the volumes' `pv.kubernetes.io/provisioned-by`. */
export const HOST_PATH_PLUGIN = 'kubernetes.io/host-path';
/** Where 1.21 makes the volumes' directories. */
export const DEFAULT_HOST_PATH_ROOT = '/tmp/hostpath_pv';
/** 1.21's `util.VolumeDynamicallyCreatedByKey` and the host-path provisioner's value of it. */
const ANN_CREATED_BY = 'kubernetes.io/createdby';
const CREATED_BY = 'hostpath-dynamic-provisioner';
/** The node label a host-path volume's node affinity names. */
const HOSTNAME_LABEL = 'kubernetes.io/hostname';

/**
 * The PersistentVolume for `claim` of `cls`, named `name`, bound to the claim, with a new directory under `root`
 * (made before returning). Rejects (with 1.21's message) block claims and a failed `mkdir`.
 */
export async function provisionHostPath(
  name: string,
  claim: PersistentVolumeClaim,
  cls: StorageClass,
  root: string,
  node: Node | undefined,
): Promise<PersistentVolume> {
  if (claim.spec?.volumeMode === 'Block')
    throw new Error(`${HOST_PATH_PLUGIN} does not support block volume provisioning`);
  const path = join(root, randomUUID());
  const accessModes = claim.spec?.accessModes?.length ? claim.spec.accessModes : ['ReadWriteOnce'];
  const spec: NonNullable<PersistentVolume['spec']> = {
    persistentVolumeReclaimPolicy: cls.reclaimPolicy ?? 'Delete',
    accessModes,
    capacity: { storage: claim.spec?.resources?.requests?.storage ?? '0' },
    hostPath: { path },
    storageClassName: cls.metadata?.name,
    claimRef: claimReference(claim),
  } as NonNullable<PersistentVolume['spec']>;
  if (node) {
    const host = node.metadata?.labels?.[HOSTNAME_LABEL] ?? node.metadata?.name ?? '';
    spec.nodeAffinity = {
      required: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: HOSTNAME_LABEL, operator: 'In', values: [host] }] }],
      },
    };
  }
  await mkdir(path, { recursive: true, mode: 0o750 });
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name,
      annotations: {
        [ANN_CREATED_BY]: CREATED_BY,
        [ANN_BOUND_BY_CONTROLLER]: 'yes',
        [ANN_PROVISIONED_BY]: HOST_PATH_PLUGIN,
      },
    },
    spec,
  } as PersistentVolume;
}

/**
 * Removes a host-path volume's directory (1.21's `hostPathDeleter.Delete`): only paths under `/tmp/` (1.21's rule)
 * or under `root`, so a volume naming `/` or `/etc` is refused, not deleted.
 */
export async function deleteHostPath(pv: PersistentVolume, root: string): Promise<void> {
  const path = pv.spec?.hostPath?.path;
  if (!path) throw new Error('spec.PersistentVolumeSource.HostPath is nil');
  const abs = resolve(path);
  const under = (dir: string): boolean => abs.startsWith(`${resolve(dir)}/`);
  if (!under('/tmp') && !under(root))
    throw new Error(`host_path deleter only supports /tmp/.+ but received provided ${path}`);
  await rm(abs, { recursive: true, force: true });
}
