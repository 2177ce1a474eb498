/**
 * The strategies of FlowSchema and PriorityLevelConfiguration (model: Kubernetes 1.21
 * `pkg/registry/flowcontrol/{flowschema,prioritylevelconfiguration}/strategy.go` and
 * `pkg/apis/flowcontrol/validation/validation.go`, with its messages). Status is written through `/status`.
 */
import {
  type FieldError,
  FieldPath,
  field,
  type FlowSchema,
  type FlowSubject,
  type Kind,
  type NonResourcePolicyRule,
  type PolicyRulesWithSubjects,
  type PriorityLevelConfiguration,
  type ResourcePolicyRule,
  validateNamespaceName,
  validatePathSegmentName,
} from '@platform/api';

import { defaultStrategy, statusStrategy } from '../generic/default-strategy';
import { GenericStore, type StoreDefinition } from '../generic/store';
import { type CreateStrategy, type UpdateStrategy } from '../rest/rest';

const SUPPORTED_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'proxy', 'update', 'watch'];
const SUPPORTED_SUBJECT_KINDS = ['Group', 'ServiceAccount', 'User'];
const SUPPORTED_DISTINGUISHER_METHODS = ['ByNamespace', 'ByUser'];
const SUPPORTED_PRIORITY_LEVEL_TYPES = ['Exempt', 'Limited'];
const SUPPORTED_LIMIT_RESPONSE_TYPES = ['Queue', 'Reject'];
const SUPPORTED_CONDITION_STATUSES = ['False', 'True', 'Unknown'];
/** The most entropy bits shuffle sharding can draw from one 64-bit hash. */
const MAX_HASH_BITS = 60;

const hasWildcard = (values: readonly string[]): boolean => values.includes('*');

/** Validation of a FlowSchema's spec (`ValidateFlowSchemaSpec`). */
export function validateFlowSchemaSpec(fs: FlowSchema): FieldError[] {
  const path = new FieldPath('spec');
  const spec = fs.spec;
  const errs: FieldError[] = [];
  if (!spec) return [field.required(path, '')];
  const precedence = spec.matchingPrecedence ?? 0;
  if (precedence <= 0) {
    errs.push(field.invalid(path.child('matchingPrecedence'), precedence, 'must be a positive value'));
  }
  if (precedence > 10000) {
    errs.push(field.invalid(path.child('matchingPrecedence'), precedence, 'must not be greater than 10000'));
  }
  const dm = spec.distinguisherMethod;
  if (dm && !SUPPORTED_DISTINGUISHER_METHODS.includes(dm.type)) {
    errs.push(field.notSupported(path.child('distinguisherMethod', 'type'), dm.type, SUPPORTED_DISTINGUISHER_METHODS));
  }
  const plName = spec.priorityLevelConfiguration?.name ?? '';
  const plPath = path.child('priorityLevelConfiguration', 'name');
  if (plName === '') errs.push(field.required(plPath, 'must reference a priority level'));
  else for (const msg of validatePathSegmentName(plName, false)) errs.push(field.invalid(plPath, plName, msg));
  (spec.rules ?? []).forEach((rule, i) =>
    errs.push(...validatePolicyRulesWithSubjects(rule, path.child('rules').index(i))),
  );
  return errs;
}

function validatePolicyRulesWithSubjects(rule: PolicyRulesWithSubjects, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const subjects = rule.subjects ?? [];
  if (subjects.length === 0)
    errs.push(field.required(path.child('subjects'), 'subjects must contain at least one value'));
  subjects.forEach((s, i) => errs.push(...validateSubject(s, path.child('subjects').index(i))));
  const resourceRules = rule.resourceRules ?? [];
  const nonResourceRules = rule.nonResourceRules ?? [];
  if (resourceRules.length === 0 && nonResourceRules.length === 0) {
    errs.push(field.required(path, 'at least one of resourceRules and nonResourceRules has to be non-empty'));
  }
  resourceRules.forEach((r, i) => errs.push(...validateResourceRule(r, path.child('resourceRules').index(i))));
  nonResourceRules.forEach((r, i) => errs.push(...validateNonResourceRule(r, path.child('nonResourceRules').index(i))));
  return errs;
}

function validateSubject(s: FlowSubject, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const KIND_OF = { user: 'User', group: 'Group', serviceAccount: 'ServiceAccount' } as const;
  const forbidOthers = (keep: keyof typeof KIND_OF): void => {
    for (const k of Object.keys(KIND_OF) as (keyof typeof KIND_OF)[]) {
      if (k !== keep && s[k])
        errs.push(field.forbidden(path.child(k), `${k} is forbidden when subject kind is not '${KIND_OF[k]}'`));
    }
  };
  switch (s.kind) {
    case 'User':
      forbidOthers('user');
      if (!s.user) errs.push(field.required(path.child('user'), "user is required when subject kind is 'User'"));
      else if (!s.user.name) errs.push(field.required(path.child('user', 'name'), 'username is required'));
      break;
    case 'Group':
      forbidOthers('group');
      if (!s.group) errs.push(field.required(path.child('group'), "group is required when subject kind is 'Group'"));
      else if (!s.group.name) errs.push(field.required(path.child('group', 'name'), 'name is required'));
      break;
    case 'ServiceAccount': {
      forbidOthers('serviceAccount');
      const sa = s.serviceAccount;
      if (!sa) {
        errs.push(
          field.required(
            path.child('serviceAccount'),
            "serviceAccount is required when subject kind is 'ServiceAccount'",
          ),
        );
        break;
      }
      if (!sa.name) errs.push(field.required(path.child('serviceAccount', 'name'), 'name is required'));
      if (!sa.namespace) errs.push(field.required(path.child('serviceAccount', 'namespace'), 'namespace is required'));
      else
        for (const msg of validateNamespaceName(sa.namespace, false))
          errs.push(field.invalid(path.child('serviceAccount', 'namespace'), sa.namespace, msg));
      break;
    }
    default:
      errs.push(field.notSupported(path.child('kind'), s.kind, SUPPORTED_SUBJECT_KINDS));
  }
  return errs;
}

function validateResourceRule(rule: ResourcePolicyRule, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const verbs = rule.verbs ?? [];
  if (verbs.length === 0) errs.push(field.required(path.child('verbs'), 'verbs must contain at least one value'));
  else if (hasWildcard(verbs)) {
    if (verbs.length > 1)
      errs.push(field.invalid(path.child('verbs'), verbs, "if '*' is present, must not specify other verbs"));
  } else if (!verbs.every((v) => SUPPORTED_VERBS.includes(v))) {
    errs.push(field.notSupported(path.child('verbs'), verbs, SUPPORTED_VERBS));
  }
  const groups = rule.apiGroups ?? [];
  if (groups.length === 0)
    errs.push(field.required(path.child('apiGroups'), 'resource rules must supply at least one api group'));
  else if (hasWildcard(groups) && groups.length > 1)
    errs.push(field.invalid(path.child('apiGroups'), groups, "if '*' is present, must not specify other api groups"));
  const resources = rule.resources ?? [];
  if (resources.length === 0)
    errs.push(field.required(path.child('resources'), 'resource rules must supply at least one resource'));
  else if (hasWildcard(resources) && resources.length > 1)
    errs.push(field.invalid(path.child('resources'), resources, "if '*' is present, must not specify other resources"));
  const namespaces = rule.namespaces ?? [];
  if (namespaces.length === 0 && !rule.clusterScope) {
    errs.push(
      field.required(
        path.child('namespaces'),
        'resource rules that are not cluster scoped must supply at least one namespace',
      ),
    );
  } else if (hasWildcard(namespaces)) {
    if (namespaces.length > 1)
      errs.push(
        field.invalid(path.child('namespaces'), namespaces, "if '*' is present, must not specify other namespaces"),
      );
  } else {
    namespaces.forEach((ns, i) => {
      for (const msg of validateNamespaceName(ns, false))
        errs.push(field.invalid(path.child('namespaces').index(i), ns, msg));
    });
  }
  return errs;
}

/** `ValidateNonResourceURLPath`: `/`, `*`, or an absolute path with at most a trailing `/*`. */
function nonResourceURLError(url: string, path: FieldPath): FieldError | undefined {
  if (url === '*' || url === '/') return undefined;
  if (url === '') return field.invalid(path, url, 'must not be empty');
  if (!url.startsWith('/')) return field.invalid(path, url, 'must start with slash');
  if (url.includes(' ')) return field.invalid(path, url, 'must not contain white-space');
  if (url.includes('//')) return field.invalid(path, url, 'must not contain double slash');
  const wildcards = url.split('*').length - 1;
  if (wildcards > 1 || (wildcards === 1 && !url.endsWith('/*')))
    return field.invalid(path, url, 'wildcard can only do suffix glob matching');
  return undefined;
}

function validateNonResourceRule(rule: NonResourcePolicyRule, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const verbs = rule.verbs ?? [];
  if (verbs.length === 0) errs.push(field.required(path.child('verbs'), 'verbs must contain at least one value'));
  else if (hasWildcard(verbs) && verbs.length > 1)
    errs.push(field.invalid(path.child('verbs'), verbs, "if '*' is present, must not specify other verbs"));
  const urls = rule.nonResourceURLs ?? [];
  if (urls.length === 0)
    errs.push(field.required(path.child('nonResourceURLs'), 'nonResourceURLs must contain at least one value'));
  else if (hasWildcard(urls)) {
    if (urls.length > 1)
      errs.push(
        field.invalid(
          path.child('nonResourceURLs'),
          urls,
          "if '*' is present, must not specify other non-resource URLs",
        ),
      );
  } else {
    urls.forEach((u, i) => {
      const e = nonResourceURLError(u, path.child('nonResourceURLs').index(i));
      if (e) errs.push(e);
    });
  }
  return errs;
}

/** Validation of a PriorityLevelConfiguration's spec (`ValidatePriorityLevelConfigurationSpec`). */
export function validatePriorityLevelConfigurationSpec(pl: PriorityLevelConfiguration): FieldError[] {
  const path = new FieldPath('spec');
  const spec = pl.spec;
  const errs: FieldError[] = [];
  if (!spec) return [field.required(path, '')];
  const name = pl.metadata?.name ?? '';
  if ((name === 'exempt') !== (spec.type === 'Exempt')) {
    errs.push(field.invalid(path.child('type'), spec.type, "type must be 'Exempt' if and only if name is 'exempt'"));
  }
  switch (spec.type) {
    case 'Exempt':
      if (spec.limited) errs.push(field.forbidden(path.child('limited'), 'must be nil if the type is not Limited'));
      break;
    case 'Limited': {
      const limited = spec.limited;
      if (!limited) {
        errs.push(field.required(path.child('limited'), 'must not be empty when type is Limited'));
        break;
      }
      const lp = path.child('limited');
      const acs = limited.assuredConcurrencyShares ?? 0;
      if (acs <= 0) errs.push(field.invalid(lp.child('assuredConcurrencyShares'), acs, 'must be positive'));
      errs.push(...validateLimitResponse(limited.limitResponse, lp.child('limitResponse')));
      break;
    }
    default:
      errs.push(field.notSupported(path.child('type'), spec.type, SUPPORTED_PRIORITY_LEVEL_TYPES));
  }
  return errs;
}

type LimitResponse = NonNullable<NonNullable<PriorityLevelConfiguration['spec']>['limited']>['limitResponse'];

function validateLimitResponse(lr: LimitResponse, path: FieldPath): FieldError[] {
  const type = lr?.type ?? '';
  const errs: FieldError[] = [];
  switch (type) {
    case 'Reject':
      if (lr?.queuing)
        errs.push(field.forbidden(path.child('queuing'), 'must be nil if limited.limitResponse.type is not Limited'));
      break;
    case 'Queue': {
      const q = lr?.queuing;
      const qp = path.child('queuing');
      if (!q) {
        errs.push(field.required(qp, 'must not be empty if limited.limitResponse.type is Limited'));
        break;
      }
      const limit = q.queueLengthLimit ?? 0;
      if (limit <= 0) errs.push(field.invalid(qp.child('queueLengthLimit'), limit, 'must be positive'));
      const queues = q.queues ?? 0;
      const handSize = q.handSize ?? 0;
      if (queues <= 0) errs.push(field.invalid(qp.child('queues'), queues, 'must be positive'));
      else if (handSize <= 0) errs.push(field.invalid(qp.child('handSize'), handSize, 'must be positive'));
      else if (handSize > queues)
        errs.push(field.invalid(qp.child('handSize'), handSize, `should not be greater than queues (${queues})`));
      else if (handSize * Math.log2(queues) > MAX_HASH_BITS)
        errs.push(
          field.invalid(
            qp.child('handSize'),
            handSize,
            `required entropy bits of deckSize ${queues} and handSize ${handSize} should not be greater than ${MAX_HASH_BITS}`,
          ),
        );
      break;
    }
    default:
      errs.push(field.notSupported(path.child('type'), type, SUPPORTED_LIMIT_RESPONSE_TYPES));
  }
  return errs;
}

/** Validation of the conditions of either kind's status (`ValidateFlowSchemaCondition` and its twin). */
export function validateConditions(
  conditions: readonly { type?: string; status?: string }[] | undefined,
): FieldError[] {
  const errs: FieldError[] = [];
  const path = new FieldPath('status', 'conditions');
  (conditions ?? []).forEach((c, i) => {
    if (!c.type) errs.push(field.required(path.index(i).child('type'), 'must not be empty'));
    if (c.status !== undefined && !SUPPORTED_CONDITION_STATUSES.includes(c.status))
      errs.push(field.notSupported(path.index(i).child('status'), c.status, SUPPORTED_CONDITION_STATUSES));
  });
  return errs;
}

/** The strategy of `flowschemas`. */
export function flowSchemaStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateFlowSchemaSpec(obj as FlowSchema),
    validateUpdate: (_ctx, obj) => validateFlowSchemaSpec(obj as FlowSchema),
  });
}

/** The strategy of `flowschemas/status`. */
export function flowSchemaStatusStrategy(): UpdateStrategy {
  return statusStrategy({ validateUpdate: (_ctx, obj) => validateConditions((obj as FlowSchema).status?.conditions) });
}

/** The strategy of `prioritylevelconfigurations`. */
export function priorityLevelConfigurationStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validatePriorityLevelConfigurationSpec(obj as PriorityLevelConfiguration),
    validateUpdate: (_ctx, obj) => validatePriorityLevelConfigurationSpec(obj as PriorityLevelConfiguration),
  });
}

/** The strategy of `prioritylevelconfigurations/status`. */
export function priorityLevelConfigurationStatusStrategy(): UpdateStrategy {
  return statusStrategy({
    validateUpdate: (_ctx, obj) => validateConditions((obj as PriorityLevelConfiguration).status?.conditions),
  });
}

/** The FlowSchema store, with the store of its status subresource (the priority and fairness controller writes it). */
export class FlowSchemaStore extends GenericStore {
  /** `flowschemas/status`. */
  readonly status: GenericStore;

  constructor(definition: StoreDefinition) {
    super(definition);
    this.status = new GenericStore({ ...definition, updateStrategy: flowSchemaStatusStrategy() });
  }
}

/** An entry of the built-in resource table (the shape of `BuiltinResource` in `registry/builtin.ts`). */
interface FlowcontrolResource {
  strategy: CreateStrategy & UpdateStrategy;
  status: UpdateStrategy;
  store?: (definition: StoreDefinition) => GenericStore;
}

/** The entries of the built-in resource table for the flowcontrol group (see `registry/builtin.ts`). */
export const FLOWCONTROL_RESOURCES: Record<string, (kind: Kind) => FlowcontrolResource> = {
  'flowcontrol.apiserver.platform/flowschemas': (kind: Kind) => ({
    strategy: flowSchemaStrategy(kind),
    status: flowSchemaStatusStrategy(),
    store: (definition: StoreDefinition) => new FlowSchemaStore(definition),
  }),
  'flowcontrol.apiserver.platform/prioritylevelconfigurations': (kind: Kind) => ({
    strategy: priorityLevelConfigurationStrategy(kind),
    status: priorityLevelConfigurationStatusStrategy(),
  }),
};
