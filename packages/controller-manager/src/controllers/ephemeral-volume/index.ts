/**
 * The ephemeral volume controller (model: Kubernetes 1.21 `pkg/controller/volume/ephemeral`). For each generic
 * ephemeral volume of a pod (`volumes[].ephemeral`) it creates the PersistentVolumeClaim `<pod>-<volume>` in the
 * pod's namespace from the volume's `volumeClaimTemplate`, controlled by the pod (so the garbage collector deletes
 * it with the pod). A claim of that name that the pod does not control is not touched: the pod cannot start, and a
 * Warning Event on the pod says why. Off when the GenericEphemeralVolume gate is (beta, on by default in 1.21).
 */
import {
  isAlreadyExists,
  isNotFound,
  type PersistentVolumeClaim,
  PersistentVolumeClaimKind,
  type Pod,
  PodKind,
} from '@platform/api';
import { metaNamespaceKey, runWorkers, splitMetaNamespaceKey, WorkQueue } from '@platform/client';

import { type ControllerContext, type ControllerDefinition } from '../../controller';
import { gateEnabled } from '../util/finalizers';
import { waitForSynced } from '../util/wait-synced';

/** The values of the ephemeral volume controller (no flags; tests may set the gate). */
export interface EphemeralVolumeConfig {
  genericEphemeralVolume?: boolean;
}

/** The claims a pod's ephemeral volumes need (1.21's `handleVolume`): name and object to create. */
export function ephemeralClaims(pod: Pod): PersistentVolumeClaim[] {
  const out: PersistentVolumeClaim[] = [];
  for (const v of pod.spec?.volumes ?? []) {
    const t = v.ephemeral?.volumeClaimTemplate;
    if (!t) continue;
    out.push({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: `${pod.metadata?.name}-${v.name}`,
        namespace: pod.metadata?.namespace,
        labels: t.metadata?.labels,
        annotations: t.metadata?.annotations,
        ownerReferences: [
          {
            apiVersion: 'v1',
            kind: 'Pod',
            name: pod.metadata?.name ?? '',
            uid: pod.metadata?.uid ?? '',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: structuredClone(t.spec),
    } as PersistentVolumeClaim);
  }
  return out;
}

async function run(ctx: ControllerContext, o: EphemeralVolumeConfig): Promise<void> {
  const pods = ctx.informers.informerFor(PodKind);
  const claims = ctx.informers.informerFor(PersistentVolumeClaimKind);
  if (!gateEnabled(ctx, 'GenericEphemeralVolume', o.genericEphemeralVolume)) {
    ctx.logger.info('Ephemeral volume controller is disabled (feature gate GenericEphemeralVolume is off)');
    if (!ctx.signal.aborted) await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
    return;
  }
  const queue = new WorkQueue<string>({ name: 'ephemeral_volume', metrics: ctx.metrics });
  ctx.signal.addEventListener('abort', () => queue.shutDown(), { once: true });
  const addPod = (p: Pod): void => {
    if ((p.spec?.volumes ?? []).some((v) => v.ephemeral)) queue.add(metaNamespaceKey(p));
  };
  pods.addEventHandler({ onAdd: addPod, onUpdate: (_o, p) => addPod(p) });
  // A claim deleted while its pod still exists is created again (1.21 watches claims for this).
  claims.addEventHandler({
    onDelete: (c) => {
      const owner = (c as PersistentVolumeClaim).metadata?.ownerReferences?.find(
        (r) => r.controller && r.kind === 'Pod',
      );
      if (owner) queue.add(`${(c as PersistentVolumeClaim).metadata?.namespace}/${owner.name}`);
    },
  });
  const sync = async (key: string): Promise<void> => {
    const pod: Pod | undefined = pods.indexer.get(key);
    if (!pod || pod.metadata?.deletionTimestamp) return;
    const { namespace } = splitMetaNamespaceKey(key);
    const api = ctx.client.resource(PersistentVolumeClaimKind).namespace(namespace);
    for (const want of ephemeralClaims(pod)) {
      const name = want.metadata!.name!;
      let have: PersistentVolumeClaim | undefined = claims.indexer.get(`${namespace}/${name}`);
      if (!have) {
        try {
          await api.create(want, { signal: ctx.signal });
          continue;
        } catch (err) {
          if (isNotFound(err)) return; // the namespace is going away
          if (!isAlreadyExists(err)) {
            ctx.recorder.event(pod, 'Warning', 'FailedBinding', `PVC creation failed: ${String(err)}`);
            throw err;
          }
          have = await api.get(name, { signal: ctx.signal });
        }
      }
      const controlled = (have.metadata?.ownerReferences ?? []).some(
        (r) => r.controller && r.uid === pod.metadata?.uid,
      );
      if (!controlled) {
        const msg = `PVC ${namespace}/${name} was not created for the pod`;
        ctx.recorder.event(pod, 'Warning', 'FailedBinding', msg);
        ctx.logger.info('An ephemeral volume has a claim of its name not owned by its pod', { pod: key, pvc: name });
      }
    }
  };
  if (!(await waitForSynced(ctx.signal, [pods, claims]))) return;
  await runWorkers(queue, 1, sync, (key, err) => {
    if (!ctx.signal.aborted)
      ctx.logger.info('Failed to sync ephemeral volumes, retrying', { pod: key, error: String(err) });
  });
}

/** The `ephemeral-volume` controller. */
export const ephemeralVolumeController: ControllerDefinition<EphemeralVolumeConfig> = {
  name: 'ephemeral-volume',
  enabledByDefault: true,
  serviceAccount: 'ephemeral-volume-controller',
  run: (ctx, o) => run(ctx, o ?? {}),
};
