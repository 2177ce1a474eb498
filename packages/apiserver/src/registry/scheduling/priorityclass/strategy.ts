/**
 * The PriorityClass strategy and store (model: Kubernetes 1.21 `pkg/registry/scheduling/priorityclass` and
 * `ValidatePriorityClass`, plus the `Priority` admission plugin's global default rule):
 *
 * - the `system-` name prefix is reserved for the known system classes (system-cluster-critical,
 *   system-node-critical) with their exact values;
 * - a user class's value is at most 1000000000 (`HighestUserDefinablePriority`);
 * - `value` and `preemptionPolicy` never change;
 * - at most one class is the global default: creating or updating a second one answers 403 Forbidden.
 */
import {
  type ApiObject,
  type FieldError,
  FieldPath,
  field,
  forbidden,
  type Kind,
  type PriorityClass,
} from '@platform/api';

import { defaultStrategy } from '../../generic/default-strategy';
import { GenericStore } from '../../generic/store';
import {
  type CreateStrategy,
  type RequestContext,
  type UpdatedObjectInfo,
  type UpdateStrategy,
  type ValidateObjectFunc,
  type WriteOptions,
} from '../../rest/rest';

/** The highest value a user-defined priority class may have. */
export const HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000;
/** The prefix reserved for the system's classes. */
export const SYSTEM_PRIORITY_CLASS_PREFIX = 'system-';
/** The system priority classes and their values. */
export const SYSTEM_PRIORITY_CLASSES: Readonly<Record<string, number>> = {
  'system-cluster-critical': 2_000_000_000,
  'system-node-critical': 2_000_001_000,
};

/** Validation of a PriorityClass. */
export function validatePriorityClass(pc: PriorityClass): FieldError[] {
  const name = pc.metadata?.name ?? '';
  if (name.startsWith(SYSTEM_PRIORITY_CLASS_PREFIX)) {
    const value = SYSTEM_PRIORITY_CLASSES[name];
    let problem = '';
    if (value === undefined) problem = `${name} is not a known system priority class`;
    else if (value !== pc.value) problem = `value of ${name} PriorityClass must be ${value}`;
    else if (pc.globalDefault) problem = `globalDefault of ${name} PriorityClass must be false`;
    if (problem) {
      return [
        field.forbidden(
          new FieldPath('metadata', 'name'),
          `priority class names with '${SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system use only. error: ${problem}`,
        ),
      ];
    }
    return [];
  }
  if (pc.value > HIGHEST_USER_DEFINABLE_PRIORITY) {
    return [
      field.forbidden(
        new FieldPath('value'),
        `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}`,
      ),
    ];
  }
  return [];
}

/** Validation of a PriorityClass update: value and preemption policy are immutable. */
export function validatePriorityClassUpdate(pc: PriorityClass, old: PriorityClass): FieldError[] {
  const errs = validatePriorityClass(pc);
  if (pc.value !== old.value) errs.push(field.forbidden(new FieldPath('value'), 'may not be changed in an update.'));
  if ((pc.preemptionPolicy ?? null) !== (old.preemptionPolicy ?? null)) {
    errs.push(field.invalid(new FieldPath('preemptionPolicy'), pc.preemptionPolicy ?? null, 'field is immutable'));
  }
  return errs;
}

/** The strategy of `priorityclasses`. */
export function priorityClassStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validatePriorityClass(obj as PriorityClass),
    validateUpdate: (_ctx, obj, old) => validatePriorityClassUpdate(obj as PriorityClass, old as PriorityClass),
  });
}

/**
 * The PriorityClass store: the generic store, with the global default rule checked before writes. The check
 * reads the other classes first, so two concurrent creates of global defaults may both pass (as with Kubernetes'
 * admission plugin, which reads its informer).
 */
export class PriorityClassStore extends GenericStore {
  private async checkGlobalDefault(ctx: RequestContext, obj: ApiObject): Promise<void> {
    const pc = obj as PriorityClass;
    if (!pc.globalDefault) return;
    const others = (await this.list(ctx, {})).items as PriorityClass[];
    const other = others.find((o) => o.globalDefault && o.metadata?.name !== pc.metadata?.name);
    if (other) {
      throw forbidden(
        this.groupResource,
        pc.metadata?.name ?? '',
        `PriorityClass ${other.metadata?.name ?? ''} is already marked as default. Only one default can exist`,
      );
    }
  }

  override async create(
    ctx: RequestContext,
    obj: ApiObject,
    validate: ValidateObjectFunc | undefined,
    o: WriteOptions,
  ): Promise<ApiObject> {
    await this.checkGlobalDefault(ctx, obj);
    return super.create(ctx, obj, validate, o);
  }

  override update(
    ctx: RequestContext,
    info: UpdatedObjectInfo,
    validateCreate: ValidateObjectFunc | undefined,
    validateUpdate: ValidateObjectFunc | undefined,
    o: WriteOptions,
  ): Promise<{ object: ApiObject; created: boolean }> {
    const check = async (obj: ApiObject): Promise<void> => this.checkGlobalDefault(ctx, obj);
    return super.update(
      ctx,
      info,
      async (obj, old) => {
        await check(obj);
        await validateCreate?.(obj, old);
      },
      async (obj, old) => {
        await check(obj);
        await validateUpdate?.(obj, old);
      },
      o,
    );
  }
}
