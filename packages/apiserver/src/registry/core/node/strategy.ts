/**
 * The Node strategies (model: Kubernetes 1.21 `pkg/registry/core/node/strategy.go`, `ValidateNode`,
 * `ValidateNodeUpdate`): a node may be created with its status (node agents register that way); taints are valid
 * and unique by key and effect; `spec.podCIDR(s)` and `spec.providerID` change only from unset to set.
 */
import {
  type FieldError,
  FieldPath,
  field,
  isValidLabelValue,
  type Kind,
  type Node,
  type Taint,
  validateLabelName,
} from '@platform/api';

import { defaultStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const CIDR_RE = /^(\d{1,3}(\.\d{1,3}){3}\/\d{1,2}|[0-9a-fA-F:]+\/\d{1,3})$/;

/** Validation of a node's taints (model: `validateNodeTaints`). */
export function validateTaints(taints: Taint[] | null | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (taints ?? []).forEach((t, i) => {
    const p = path.index(i);
    if (!t.key) errs.push(field.required(p.child('key'), ''));
    else errs.push(...validateLabelName(t.key, p.child('key')));
    if (t.value) errs.push(...field.invalidEach(p.child('value'), t.value, isValidLabelValue(t.value)));
    if (!t.effect) errs.push(field.required(p.child('effect'), ''));
    else if (!TAINT_EFFECTS.includes(t.effect))
      errs.push(field.notSupported(p.child('effect'), t.effect, TAINT_EFFECTS));
    const key = `${t.key}:${t.effect}`;
    if (seen.has(key)) {
      errs.push(field.duplicate(p.child('effect'), t.effect));
    }
    seen.add(key);
  });
  return errs;
}

/** Validation of a Node. */
export function validateNode(node: Node): FieldError[] {
  const spec = node.spec ?? {};
  const path = new FieldPath('spec');
  const errs = validateTaints(spec.taints, path.child('taints'));
  const cidrs = spec.podCIDRs ?? [];
  cidrs.forEach((c, i) => {
    if (!CIDR_RE.test(c)) errs.push(field.invalid(path.child('podCIDRs').index(i), c, 'must be a valid CIDR'));
  });
  if (cidrs.length > 2)
    errs.push(field.invalid(path.child('podCIDRs'), cidrs, 'may specify no more than one CIDR for each IP family'));
  if (spec.podCIDR && cidrs.length && spec.podCIDR !== cidrs[0]) {
    errs.push(field.invalid(path.child('podCIDRs').index(0), cidrs[0], 'must be equal to podCIDR'));
  }
  return errs;
}

/** Validation of a Node update: `podCIDR(s)` and `providerID` are set once. */
export function validateNodeUpdate(node: Node, old: Node): FieldError[] {
  const errs = validateNode(node);
  const path = new FieldPath('spec');
  const oldCIDRs = old.spec?.podCIDRs ?? (old.spec?.podCIDR ? [old.spec.podCIDR] : []);
  const newCIDRs = node.spec?.podCIDRs ?? (node.spec?.podCIDR ? [node.spec.podCIDR] : []);
  if (oldCIDRs.length > 0 && JSON.stringify(oldCIDRs) !== JSON.stringify(newCIDRs)) {
    errs.push(field.forbidden(path.child('podCIDRs'), 'node updates may not change podCIDR except from "" to valid'));
  }
  if (old.spec?.providerID && old.spec.providerID !== node.spec?.providerID) {
    errs.push(
      field.forbidden(path.child('providerID'), 'node updates may not change providerID except from "" to valid'),
    );
  }
  return errs;
}

/** The strategy of `nodes`. */
export function nodeStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  const base = defaultStrategy(kind, {
    validate: (_ctx, obj) => validateNode(obj as Node),
    validateUpdate: (_ctx, obj, old) => validateNodeUpdate(obj as Node, old as Node),
  });
  return {
    ...base,
    // Nodes may be created with their status (a node agent registers its capacity and addresses at once).
    prepareForCreate(ctx, obj) {
      const status = (obj as Node).status;
      base.prepareForCreate(ctx, obj);
      if (status !== undefined) (obj as Node).status = status;
    },
  };
}
