/**
 * The admission chain (model: apiserver `pkg/admission/chain.go` and `pkg/admission/reinvocation.go`): the
 * handlers' {@link Admission} over an ordered list of plugins. `admit` runs every mutating plugin in order; when a
 * plugin that supports reinvocation (the mutating webhooks) ran and a later plugin changed the object, it is
 * reinvoked once, and if that changed the object again the built-in mutating plugins run once more (they are
 * idempotent). `validate` runs every validating plugin in order on the final object.
 */
import { type ApiObject } from '@platform/api';

import { type Admission, type RequestScope } from '../endpoints/handlers/scope';
import { type RequestContext } from '../registry/rest/rest';
import { type AdmissionAttributes, type AdmissionPlugin, type Operation } from './interfaces';

/** The attributes of one admission call, from what the handlers pass. */
export function attributesFor(
  ctx: RequestContext,
  op: Operation,
  obj: ApiObject | undefined,
  old: ApiObject | undefined,
  scope: RequestScope,
  dryRun: boolean,
  name = '',
): AdmissionAttributes {
  const namespaced = scope.resourceKind.namespaced;
  const namespace = namespaced ? ctx.namespace || obj?.metadata?.namespace || old?.metadata?.namespace || '' : '';
  return {
    operation: op,
    object: obj,
    oldObject: old,
    name: obj?.metadata?.name || old?.metadata?.name || name,
    namespace,
    kind: { group: scope.kind.group, version: scope.kind.version, kind: scope.kind.kind },
    objectKind: scope.kind,
    resource: { group: scope.resourceKind.group, version: scope.resourceKind.version, resource: scope.resource },
    subresource: scope.subresource,
    user: ctx.user,
    dryRun,
    ctx,
  };
}

/** An ordered chain of admission plugins. */
export class AdmissionChain implements Admission {
  private readonly mutating: AdmissionPlugin[];
  private readonly validating: AdmissionPlugin[];

  constructor(readonly plugins: readonly AdmissionPlugin[]) {
    this.mutating = plugins.filter((p) => p.admit);
    this.validating = plugins.filter((p) => p.validate);
  }

  /** The plugin names, in order. */
  names(): string[] {
    return this.plugins.map((p) => p.name);
  }

  async admit(
    ctx: RequestContext,
    op: Operation,
    obj: ApiObject | undefined,
    old: ApiObject | undefined,
    scope: RequestScope,
    dryRun: boolean,
    name?: string,
  ): Promise<void> {
    const a = attributesFor(ctx, op, obj, old, scope, dryRun, name);
    // Snapshot of the object after each reinvocable plugin ran: reinvoke when a later plugin changed it.
    const after = new Map<AdmissionPlugin, string>();
    for (const p of this.mutating) {
      if (!p.handles(op)) continue;
      const mayReinvoke = await p.admit?.(a);
      // Snapshots only for plugins that asked: a request no reinvocable webhook matched serializes nothing.
      if (mayReinvoke === true && p.reinvoke && a.object) after.set(p, JSON.stringify(a.object));
    }
    if (!a.object || after.size === 0) return;
    let changedAgain = false;
    for (const [p, snapshot] of after) {
      if (JSON.stringify(a.object) === snapshot) continue;
      if (await p.reinvoke?.(a)) changedAgain = true;
    }
    if (!changedAgain) return;
    for (const p of this.mutating) if (!p.reinvoke && p.handles(op)) await p.admit?.(a);
  }

  async validate(
    ctx: RequestContext,
    op: Operation,
    obj: ApiObject | undefined,
    old: ApiObject | undefined,
    scope: RequestScope,
    dryRun: boolean,
    name?: string,
  ): Promise<void> {
    const a = attributesFor(ctx, op, obj, old, scope, dryRun, name);
    for (const p of this.validating) if (p.handles(op)) await p.validate?.(a);
  }
}
