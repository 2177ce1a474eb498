/**
 * The disruption controller (model: Kubernetes 1.21 `pkg/controller/disruption/disruption.go`): keeps each
 * PodDisruptionBudget's status: `expectedPods`, `currentHealthy` (ready pods not being deleted nor recently
 * evicted), `desiredHealthy`, `disruptionsAllowed`, `observedGeneration`, the `DisruptionAllowed` condition, and
 * `disruptedPods`, the pods the eviction subresource has just evicted, each dropped once its pod is gone or being
 * deleted, or two minutes after its eviction (the budget is looked at again then).
 *
 * With `minAvailable` as a number the pods found are the expected pods; with a percentage, or with
 * `maxUnavailable`, the expected count is the scale of the pods' controllers (ReplicationController, ReplicaSet or
 * its Deployment, StatefulSet, or any controller with a `scale` subresource). A pod without a controller makes
 * that impossible: the budget then allows no disruption (`SyncFailed`).
 */
import {
  type ApiObject,
  DeploymentKind,
  isConflict,
  isNotFound,
  type Kind,
  matchesLabelSelector,
  type Pod,
  type PodDisruptionBudget,
  PodDisruptionBudgetKind,
  PodKind,
  ReplicaSetKind,
  ReplicationControllerKind,
  StatefulSetKind,
} from '@platform/api';
import { metaNamespaceKey, ResourceClient, runWorkers, splitMetaNamespaceKey, WorkQueue } from '@platform/client';

import { type ControllerContext, type ControllerDefinition } from '../../controller';
import { waitForSynced } from '../util/wait-synced';

/** How long an evicted pod counts as disrupted when its deletion is not observed (Kubernetes' DeletionTimeout). */
export const DELETION_TIMEOUT_MS = 2 * 60_000;

type Condition = NonNullable<NonNullable<PodDisruptionBudget['status']>['conditions']>[number];

function isPodReady(p: Pod): boolean {
  return !!p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
}

function controllerRefOf(o: ApiObject): { apiVersion: string; kind: string; name: string; uid: string } | undefined {
  return o.metadata?.ownerReferences?.find((r) => r.controller === true);
}

/** `intstr.GetScaledValueFromIntOrPercent(v, total, roundUp=true)`. */
export function scaledValue(v: number | string, total: number): number {
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v);
  if (m) return Math.ceil((Number(m[1]) * total) / 100);
  const n = Number(v);
  if (Number.isInteger(n)) return n;
  throw new Error(`invalid value for IntOrString: invalid value ${JSON.stringify(v)}`);
}

function nowTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

async function run(ctx: ControllerContext): Promise<void> {
  const pdbs = ctx.informers.informerFor(PodDisruptionBudgetKind);
  const pods = ctx.informers.informerFor(PodKind);
  const rcs = ctx.informers.informerFor(ReplicationControllerKind);
  const rss = ctx.informers.informerFor(ReplicaSetKind);
  const deployments = ctx.informers.informerFor(DeploymentKind);
  const statefulSets = ctx.informers.informerFor(StatefulSetKind);
  const queue = new WorkQueue<string>({ name: 'disruption', metrics: ctx.metrics });
  const recheck = new WorkQueue<string>({ name: 'disruption_recheck', metrics: ctx.metrics });
  const enqueue = (pdb: PodDisruptionBudget): void => queue.add(metaNamespaceKey(pdb));

  /** The budgets of a pod's namespace whose selector matches it; the first when several (with an Event). */
  const pdbForPod = (pod: Pod): PodDisruptionBudget | undefined => {
    const ns = pod.metadata?.namespace ?? '';
    const matching = pdbs.indexer
      .byIndex('namespace', ns)
      .filter((b) => matchesLabelSelector(b.spec?.selector, pod.metadata?.labels))
      .sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
    if (matching.length > 1) {
      ctx.recorder.event(
        { ...pod, apiVersion: 'v1', kind: 'Pod' },
        'Warning',
        'MultiplePodDisruptionBudgets',
        `Pod "${ns}"/"${pod.metadata?.name}" matches multiple PodDisruptionBudgets.  Chose "${matching[0]?.metadata?.name}" arbitrarily.`,
      );
    }
    return matching[0];
  };
  const onPod = (pod: Pod): void => {
    const pdb = pdbForPod(pod);
    if (pdb) enqueue(pdb);
  };

  pdbs.addEventHandler({ onAdd: enqueue, onUpdate: (_o, b) => enqueue(b), onDelete: () => {} });
  pods.addEventHandler({
    onAdd: onPod,
    onUpdate: (old, pod) => {
      onPod(pod);
      if (JSON.stringify(old.metadata?.labels) !== JSON.stringify(pod.metadata?.labels)) onPod(old);
    },
    onDelete: (p) => onPod('obj' in p ? p.obj : p),
  });

  /** The scale of a pod's controller, with its uid (to count each controller once). */
  const scaleOf = async (pod: Pod): Promise<{ uid: string; scale: number } | undefined> => {
    const ref = controllerRefOf(pod);
    if (!ref) return undefined;
    const ns = pod.metadata?.namespace ?? '';
    const byUid = <T extends ApiObject>(obj: T | undefined): T | undefined =>
      obj && obj.metadata?.uid === ref.uid ? obj : undefined;
    if (ref.kind === 'ReplicationController' && ref.apiVersion === 'v1') {
      const rc = byUid(rcs.indexer.get(`${ns}/${ref.name}`));
      if (rc) return { uid: ref.uid, scale: rc.spec?.replicas ?? 1 };
    }
    if (ref.kind === 'ReplicaSet' && ref.apiVersion === 'apps/v1') {
      const rs = byUid(rss.indexer.get(`${ns}/${ref.name}`));
      if (rs) {
        const dref = controllerRefOf(rs);
        if (dref?.kind === 'Deployment' && dref.apiVersion === 'apps/v1') {
          const d = deployments.indexer.get(`${ns}/${dref.name}`);
          if (d && d.metadata?.uid === dref.uid) return { uid: dref.uid, scale: d.spec?.replicas ?? 1 };
          return undefined;
        }
        return { uid: ref.uid, scale: rs.spec?.replicas ?? 1 };
      }
    }
    if (ref.kind === 'StatefulSet' && ref.apiVersion === 'apps/v1') {
      const ss = byUid(statefulSets.indexer.get(`${ns}/${ref.name}`));
      if (ss) return { uid: ref.uid, scale: ss.spec?.replicas ?? 1 };
    }
    // Any other controller with a scale subresource.
    const kind: Kind | undefined = ctx.client.rest.scheme.kindFor(ref.apiVersion, ref.kind);
    if (!kind?.spec.subresources?.scale) return undefined;
    try {
      const client = new ResourceClient(ctx.client.rest, kind, kind.namespaced ? ns : undefined);
      const owner = await client.get(ref.name, { signal: ctx.signal });
      if (owner.metadata?.uid !== ref.uid) return undefined;
      const scale = await client.getSubresource<ApiObject & { spec?: { replicas?: number } }>(ref.name, 'scale', {
        signal: ctx.signal,
      });
      return { uid: ref.uid, scale: scale.spec?.replicas ?? 0 };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };

  /** Sum of the scales of the pods' controllers; throws (with an Event) when a pod has none. */
  const expectedScale = async (pdb: PodDisruptionBudget, list: Pod[]): Promise<number> => {
    const scales = new Map<string, number>();
    for (const pod of list) {
      if (!controllerRefOf(pod)) {
        const msg = `found no controller ref for pod "${pod.metadata?.name}"`;
        ctx.recorder.event(pdb, 'Warning', 'NoControllerRef', msg);
        throw new Error(msg);
      }
      const s = await scaleOf(pod);
      if (!s) {
        const msg = `found no controllers for pod "${pod.metadata?.name}"`;
        ctx.recorder.event(pdb, 'Warning', 'NoControllers', msg);
        throw new Error(msg);
      }
      scales.set(s.uid, s.scale);
    }
    return [...scales.values()].reduce((a, b) => a + b, 0);
  };

  const writeStatus = async (pdb: PodDisruptionBudget, status: NonNullable<PodDisruptionBudget['status']>) => {
    const old = pdb.status;
    const sameCond = (a?: Condition[], b?: Condition[]): boolean =>
      JSON.stringify((a ?? []).map((c) => [c.type, c.status, c.reason, c.message, c.observedGeneration])) ===
      JSON.stringify((b ?? []).map((c) => [c.type, c.status, c.reason, c.message, c.observedGeneration]));
    if (
      old &&
      old.currentHealthy === status.currentHealthy &&
      old.desiredHealthy === status.desiredHealthy &&
      old.expectedPods === status.expectedPods &&
      old.disruptionsAllowed === status.disruptionsAllowed &&
      old.observedGeneration === status.observedGeneration &&
      JSON.stringify(old.disruptedPods ?? {}) === JSON.stringify(status.disruptedPods ?? {}) &&
      sameCond(old.conditions, status.conditions)
    )
      return;
    const next = structuredClone(pdb);
    next.status = status;
    await ctx.client
      .resource(PodDisruptionBudgetKind, pdb.metadata?.namespace)
      .updateStatus(next, { signal: ctx.signal });
  };

  /** The DisruptionAllowed condition, keeping its transition time when its status does not change. */
  const condition = (pdb: PodDisruptionBudget, status: 'True' | 'False', reason: string, message = ''): Condition => {
    const old = pdb.status?.conditions?.find((c) => c.type === 'DisruptionAllowed');
    const now = nowTime(Date.now());
    return {
      type: 'DisruptionAllowed',
      status,
      reason,
      message,
      observedGeneration: pdb.metadata?.generation ?? 0,
      lastTransitionTime: old && old.status === status ? (old.lastTransitionTime ?? now) : now,
    } as Condition;
  };

  const failSafe = async (pdb: PodDisruptionBudget, err: Error): Promise<void> => {
    const status = structuredClone(
      pdb.status ?? { currentHealthy: 0, desiredHealthy: 0, expectedPods: 0, disruptionsAllowed: 0 },
    );
    status.disruptionsAllowed = 0;
    status.observedGeneration = pdb.metadata?.generation ?? 0;
    status.conditions = [
      ...(status.conditions ?? []).filter((c) => c.type !== 'DisruptionAllowed'),
      condition(pdb, 'False', 'SyncFailed', err.message),
    ];
    await writeStatus(pdb, status);
  };

  const sync = async (key: string): Promise<void> => {
    const pdb = pdbs.indexer.get(key);
    if (!pdb) return;
    const { namespace } = splitMetaNamespaceKey(key);
    const list = (pods.indexer.byIndex('namespace', namespace) as Pod[]).filter((p) =>
      matchesLabelSelector(pdb.spec?.selector, p.metadata?.labels),
    );
    if (list.length === 0) ctx.recorder.event(pdb, 'Normal', 'NoPods', 'No matching pods found');

    let expected: number;
    let desired: number;
    try {
      const { minAvailable, maxUnavailable } = pdb.spec ?? {};
      if (maxUnavailable !== undefined && maxUnavailable !== null) {
        expected = await expectedScale(pdb, list);
        desired = Math.max(0, expected - scaledValue(maxUnavailable, expected));
      } else if (typeof minAvailable === 'number') {
        desired = minAvailable;
        expected = list.length;
      } else if (typeof minAvailable === 'string') {
        expected = await expectedScale(pdb, list);
        desired = scaledValue(minAvailable, expected);
      } else {
        expected = list.length;
        desired = 0;
      }
    } catch (err) {
      ctx.recorder.event(
        pdb,
        'Warning',
        'CalculateExpectedPodCountFailed',
        `Failed to calculate the number of expected pods: ${(err as Error).message}`,
      );
      await failSafe(pdb, err as Error);
      return;
    }

    // Evicted pods: kept while the pod exists, is not being deleted and the eviction is recent.
    const now = Date.now();
    const byName = new Map(list.map((p) => [p.metadata?.name ?? '', p]));
    const disrupted: Record<string, string> = {};
    let recheckAt: number | undefined;
    for (const [name, at] of Object.entries(pdb.status?.disruptedPods ?? {})) {
      const pod = byName.get(name);
      if (!pod || pod.metadata?.deletionTimestamp) continue;
      const expires = Date.parse(at) + DELETION_TIMEOUT_MS;
      if (expires < now) {
        ctx.logger.info('Pod was expected to be deleted but it was not', { pod: `${namespace}/${name}` });
        continue;
      }
      disrupted[name] = at;
      recheckAt = recheckAt === undefined ? expires : Math.min(recheckAt, expires);
    }
    let healthy = 0;
    for (const p of list) {
      if (p.metadata?.deletionTimestamp) continue;
      if (disrupted[p.metadata?.name ?? ''] !== undefined) continue;
      if (isPodReady(p)) healthy++;
    }
    let allowed = healthy - desired;
    if (expected <= 0 || allowed <= 0) allowed = 0;
    const conditions = [
      ...(pdb.status?.conditions ?? []).filter((c) => c.type !== 'DisruptionAllowed'),
      allowed > 0 ? condition(pdb, 'True', 'SufficientPods') : condition(pdb, 'False', 'InsufficientPods'),
    ];
    await writeStatus(pdb, {
      observedGeneration: pdb.metadata?.generation ?? 0,
      disruptedPods: disrupted,
      disruptionsAllowed: allowed,
      currentHealthy: healthy,
      desiredHealthy: desired,
      expectedPods: expected,
      conditions,
    });
    if (recheckAt !== undefined) recheck.addAfter(key, Math.max(0, recheckAt - Date.now()) + 1);
  };

  const stop = (): void => {
    queue.shutDown();
    recheck.shutDown();
  };
  ctx.signal.addEventListener('abort', stop, { once: true });
  try {
    if (!(await waitForSynced(ctx.signal, [pdbs, pods, rcs, rss, deployments, statefulSets]))) return;
    const onError = (key: string, err: unknown): void => {
      if (ctx.signal.aborted) return;
      // A conflict is the cache lagging behind the budget's latest write: the requeued sync reads it again.
      if (isConflict(err)) ctx.logger.info('Conflict syncing pdb; requeued', { pdb: key });
      else ctx.logger.error('Failed to sync pdb', { pdb: key, error: String(err) });
    };
    await Promise.all([
      runWorkers(queue, 2, sync, onError),
      runWorkers(
        recheck,
        1,
        async (key) => {
          queue.add(key);
          return Promise.resolve();
        },
        onError,
      ),
    ]);
  } finally {
    stop();
    ctx.signal.removeEventListener('abort', stop);
  }
}

/** The `disruption` controller. */
export const disruptionController: ControllerDefinition = {
  name: 'disruption',
  enabledByDefault: true,
  run,
};
