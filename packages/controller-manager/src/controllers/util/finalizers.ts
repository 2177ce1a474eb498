/** Finalizer edits on a copy of a cached object (the copy is what a controller then updates), and feature gates. */
import { type ApiObject } from '@platform/api';
import { CONTROL_PLANE_FEATURES, type FeatureGateReader } from '@platform/common';

import { type ControllerContext } from '../../controller';

/** A copy of `obj` with finalizer `f` appended. */
export function withFinalizer<T extends ApiObject>(obj: T, f: string): T {
  const copy = structuredClone(obj);
  copy.metadata = { ...copy.metadata, finalizers: [...(copy.metadata?.finalizers ?? []), f] };
  return copy;
}

/** A copy of `obj` without finalizer `f`. */
export function withoutFinalizer<T extends ApiObject>(obj: T, f: string): T {
  const copy = structuredClone(obj);
  copy.metadata = { ...copy.metadata, finalizers: (copy.metadata?.finalizers ?? []).filter((x) => x !== f) };
  return copy;
}

/**
 * Whether feature gate `name` is on: the daemon's gates (`ctx.featureGates`) when it passes them, else the test's
 * `override`, else the gate's default.
 */
export function gateEnabled(ctx: ControllerContext, name: string, override?: boolean): boolean {
  const gates = (ctx as ControllerContext & { featureGates?: FeatureGateReader }).featureGates;
  if (gates) return gates.enabled(name);
  return override ?? CONTROL_PLANE_FEATURES.get(name)?.default ?? false;
}
