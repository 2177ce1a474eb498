/**
 * `pods/eviction` (model: Kubernetes 1.21 `EvictionREST` in `pkg/registry/core/pod/storage/eviction.go`): POST an
 * Eviction to delete a pod with the Eviction's DeleteOptions, subject to the pod's PodDisruptionBudget.
 *
 * A pod that is not running (Pending, Succeeded, Failed) or already terminating is deleted without consulting any
 * budget. Otherwise the one budget in the pod's namespace whose selector matches the pod must allow a disruption
 * (`status.disruptionsAllowed > 0`, observed at the budget's generation): the eviction then records the pod in
 * `status.disruptedPods` and lowers `disruptionsAllowed` (409 when the budget changed meanwhile, as in Kubernetes)
 * before deleting. A budget that does not allow it answers 429; more than one budget for a pod answers 500.
 */
import {
  type ApiObject,
  badRequest,
  type DeleteOptions,
  type Eviction,
  internalError,
  labelSelectorAsSelector,
  type Pod,
  type PodDisruptionBudget,
  successStatus,
  tooManyRequests,
} from '@platform/api';

import { type GenericStore, timeText } from '../../generic/store';
import {
  type Creater,
  type DeleteRequest,
  type RequestContext,
  type RestStorage,
  type ValidateObjectFunc,
  type WriteOptions,
} from '../../rest/rest';

/** The message of a 429 answer, as Kubernetes words it. */
export const EVICTION_REFUSED = "Cannot evict pod as it would violate the pod's disruption budget.";

/** The storage of `pods/eviction`: create only. */
export class EvictionREST implements Creater, RestStorage {
  /**
   * @param pods the pods' main store (the delete runs through it, graceful deletion included)
   * @param pdbStatus the PodDisruptionBudgets' status store; undefined when that resource is not served
   */
  constructor(
    readonly kind: RestStorage['kind'],
    private readonly pods: GenericStore,
    private readonly pdbStatus: () => GenericStore | undefined,
  ) {}

  async create(
    ctx: RequestContext,
    obj: ApiObject,
    validate: ValidateObjectFunc | undefined,
    o: WriteOptions,
  ): Promise<ApiObject> {
    const eviction = obj as Eviction;
    const name = eviction.metadata?.name;
    if (!name) throw badRequest('name in URL does not match name in Eviction object');
    if (validate) await validate(obj);
    const pod = (await this.pods.get(ctx, name, {})) as Pod;
    const options = (eviction.deleteOptions ?? {}) as DeleteOptions;
    const dryRun = o.dryRun || (options.dryRun ?? []).includes('All');
    const phase = pod.status?.phase;
    const ignoresBudgets =
      phase === 'Pending' || phase === 'Succeeded' || phase === 'Failed' || !!pod.metadata?.deletionTimestamp;
    const pdbs = ignoresBudgets ? undefined : this.pdbStatus();
    if (pdbs) await this.takeDisruption(ctx, pdbs, pod, dryRun);
    const { dryRun: _d, apiVersion: _a, kind: _k, ...rest } = options;
    const request: DeleteRequest = { ...rest, dryRun };
    await this.pods.delete(ctx, name, undefined, request);
    return successStatus() as ApiObject;
  }

  private async takeDisruption(ctx: RequestContext, store: GenericStore, pod: Pod, dryRun: boolean): Promise<void> {
    const list = await store.list(ctx, {});
    const labels = pod.metadata?.labels ?? {};
    const matching = (list.items as PodDisruptionBudget[]).filter((pdb) => {
      if (!pdb.spec?.selector) return false;
      try {
        const sel = labelSelectorAsSelector(pdb.spec.selector);
        return !sel.isEmpty() && sel.matches(labels);
      } catch {
        return false;
      }
    });
    if (matching.length === 0) return;
    if (matching.length > 1) {
      throw internalError(
        new Error('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.'),
      );
    }
    const pdb = matching[0] as PodDisruptionBudget;
    const podName = pod.metadata?.name ?? '';
    const updated = structuredClone(pdb);
    const status = (updated.status ??= {
      disruptionsAllowed: 0,
      currentHealthy: 0,
      desiredHealthy: 0,
      expectedPods: 0,
    });
    if ((status.observedGeneration ?? 0) < (pdb.metadata?.generation ?? 0) || status.disruptionsAllowed <= 0) {
      throw tooManyRequests(EVICTION_REFUSED, 10);
    }
    status.disruptionsAllowed -= 1;
    status.disruptedPods = { ...status.disruptedPods, [podName]: timeText(ctx.now()) };
    await store.update(
      ctx,
      { name: pdb.metadata?.name ?? '', updatedObject: () => Promise.resolve(structuredClone(updated)) },
      undefined,
      undefined,
      { dryRun },
    );
  }
}
