/**
 * The volume expand controller (model: Kubernetes 1.21 `pkg/controller/volume/expand`). A bound claim whose
 * requested storage exceeds its capacity asks for its volume to grow. Growing needs a volume plugin that can
 * expand, and this platform has no in-tree volume plugin: as 1.21 does when it finds none, the claim gets the
 * Normal Event ExternalExpanding ("waiting for an external controller") once per requested size, and CSI volumes
 * are left to their external resizer. Said once in the log. Off when the ExpandPersistentVolumes gate is.
 */
import { type PersistentVolumeClaim, PersistentVolumeClaimKind, parseQuantity } from '@platform/api';

import { type ControllerContext, type ControllerDefinition } from '../../controller';
import { gateEnabled } from '../util/finalizers';
import { waitForSynced } from '../util/wait-synced';

/** The values of the expand controller (no flags; tests may set the gate). */
export interface ExpanderConfig {
  expandPersistentVolumes?: boolean;
}

/** 1.21's Event message when no plugin can expand the volume. */
export const EXTERNAL_EXPANDING_MESSAGE =
  "Ignoring the PVC: didn't find a plugin capable of expanding the volume; waiting for an external controller to process this PVC.";

/** The size a bound claim asks its volume to grow to, or undefined when it asks for nothing. */
export function resizeRequest(c: PersistentVolumeClaim): string | undefined {
  if (c.status?.phase !== 'Bound' || !c.spec?.volumeName) return undefined;
  const want = c.spec.resources?.requests?.storage as string | undefined;
  const have = c.status.capacity?.storage as string | undefined;
  if (!want || !have) return undefined;
  try {
    return parseQuantity(want).cmp(parseQuantity(have)) > 0 ? want : undefined;
  } catch {
    return undefined;
  }
}

async function run(ctx: ControllerContext, o: ExpanderConfig): Promise<void> {
  const claims = ctx.informers.informerFor(PersistentVolumeClaimKind);
  if (!gateEnabled(ctx, 'ExpandPersistentVolumes', o.expandPersistentVolumes)) {
    ctx.logger.info('Volume expand controller is disabled (feature gate ExpandPersistentVolumes is off)');
    if (!ctx.signal.aborted) await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
    return;
  }
  /** The size each claim (by uid) was last told about. */
  const told = new Map<string, string>();
  let logged = false;
  const check = (c: PersistentVolumeClaim): void => {
    const uid = c.metadata?.uid ?? '';
    const want = resizeRequest(c);
    if (!want) {
      told.delete(uid);
      return;
    }
    if (told.get(uid) === want) return;
    told.set(uid, want);
    if (!logged) {
      logged = true;
      ctx.logger.info('No in-tree volume plugin exists: volume expansion is left to external resizers');
    }
    ctx.recorder.event(c, 'Normal', 'ExternalExpanding', EXTERNAL_EXPANDING_MESSAGE);
  };
  claims.addEventHandler({
    onAdd: check,
    onUpdate: (_old, c) => check(c),
    onDelete: (c) => told.delete((c as PersistentVolumeClaim).metadata?.uid ?? ''),
  });
  if (!(await waitForSynced(ctx.signal, [claims]))) return;
  if (!ctx.signal.aborted) await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
}

/** The `persistentvolume-expander` controller. */
export const persistentVolumeExpanderController: ControllerDefinition<ExpanderConfig> = {
  name: 'persistentvolume-expander',
  enabledByDefault: true,
  serviceAccount: 'expand-controller',
  run: (ctx, o) => run(ctx, o ?? {}),
};
