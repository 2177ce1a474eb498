/**
 * `pods/binding` and `bindings` (model: Kubernetes 1.21 `BindingREST` in `pkg/registry/core/pod/storage`): POST a
 * Binding to assign a pod to a node. The pod's `spec.nodeName` is set once: a pod already bound, or being deleted,
 * answers 409. The Binding's annotations are copied onto the pod, and its `PodScheduled` condition becomes True.
 */
import {
  type ApiObject,
  badRequest,
  type Binding,
  conflict,
  FieldPath,
  field,
  type FieldError,
  invalid,
  notFound,
  type Pod,
  successStatus,
} from '@platform/api';

import { type GenericStore, timeText } from '../../generic/store';
import {
  type Creater,
  type RequestContext,
  type RestStorage,
  type ValidateObjectFunc,
  type WriteOptions,
} from '../../rest/rest';

/** Validation of a Binding (model: `ValidatePodBinding`). */
export function validateBinding(b: Binding): FieldError[] {
  const errs: FieldError[] = [];
  const kind = b.target?.kind;
  if (kind && kind !== 'Node')
    errs.push(field.notSupported(new FieldPath('target', 'kind'), kind, ['Node', '<empty>']));
  if (!b.target?.name) errs.push(field.required(new FieldPath('target', 'name'), ''));
  return errs;
}

/**
 * The storage of a binding: create only. `pods` gives a store of pods whose update strategy changes nothing of its
 * own (so the binding may set `spec.nodeName`, which the pod strategy forbids); undefined when pods are not served.
 */
export class BindingREST implements Creater, RestStorage {
  constructor(
    readonly kind: RestStorage['kind'],
    private readonly pods: () => GenericStore | undefined,
  ) {}

  async create(
    ctx: RequestContext,
    obj: ApiObject,
    validate: ValidateObjectFunc | undefined,
    o: WriteOptions,
  ): Promise<ApiObject> {
    const binding = obj as Binding;
    const name = binding.metadata?.name;
    if (!name) throw badRequest('name in URL does not match name in Binding object');
    const errs = validateBinding(binding);
    if (errs.length) throw invalid({ group: '', kind: 'Binding' }, name, errs);
    if (validate) await validate(obj);
    const pods = this.pods();
    if (!pods) throw notFound({ group: '', resource: 'pods' }, name);
    const gr = pods.groupResource;
    const nodeName = binding.target.name as string;
    await pods.update(
      ctx,
      {
        name,
        updatedObject: (_ctx, current) => {
          if (!current) throw notFound(gr, name);
          const pod = current as Pod;
          if (pod.metadata?.deletionTimestamp) {
            throw conflict(gr, name, `pod ${name} is being deleted, cannot be assigned to a host`);
          }
          if (pod.spec?.nodeName) {
            throw conflict(gr, name, `pod ${name} is already assigned to node ${JSON.stringify(pod.spec.nodeName)}`);
          }
          const m = (pod.metadata ??= {});
          const annotations = binding.metadata?.annotations;
          if (annotations && Object.keys(annotations).length) m.annotations = { ...m.annotations, ...annotations };
          (pod.spec ??= { containers: [] }).nodeName = nodeName;
          const status = (pod.status ??= {});
          const conditions = (status.conditions ?? []).filter((c) => c.type !== 'PodScheduled');
          conditions.push({ type: 'PodScheduled', status: 'True', lastTransitionTime: timeText(ctx.now()) });
          status.conditions = conditions;
          return Promise.resolve(pod);
        },
      },
      undefined,
      undefined,
      o,
    );
    return successStatus() as ApiObject;
  }
}
