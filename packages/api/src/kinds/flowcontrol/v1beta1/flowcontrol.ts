/**
 * flowcontrol.apiserver.platform/v1beta1 FlowSchema and PriorityLevelConfiguration: the configuration of API
 * Priority and Fairness (Kubernetes 1.21's `flowcontrol.apiserver.k8s.io/v1beta1`, renamed). The enumerations
 * (`type`, `kind`) are plain strings in the schema: the strategy checks them with Kubernetes' messages.
 */
import { type Static } from '@sinclair/typebox';

import { object, opt, ptr, ref, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';

/** The API group of priority and fairness. */
export const FLOWCONTROL_GROUP = 'flowcontrol.apiserver.platform';

const P = schemaPrefix(FLOWCONTROL_GROUP, 'v1beta1');

/** A condition of a FlowSchema or PriorityLevelConfiguration (both have the same fields). */
function conditionSchema(name: string) {
  return object(`${P}${name}`, {
    type: opt(1, t.string(), '`type` is the type of the condition.'),
    status: opt(2, t.string(), '`status` is the status of the condition: True, False or Unknown.'),
    lastTransitionTime: opt(3, t.time(), 'The last time the condition transitioned from one status to another.'),
    reason: opt(4, t.string(), 'A unique, one-word, CamelCase reason for the last transition.'),
    message: opt(5, t.string(), 'A human-readable message about the last transition.'),
  });
}

const UserSubjectSchema = object(`${P}UserSubject`, {
  name: req(1, t.string(), 'The username that matches, or "*" to match all usernames.'),
});
const GroupSubjectSchema = object(`${P}GroupSubject`, {
  name: req(1, t.string(), 'The user group that matches, or "*" to match all user groups.'),
});
const ServiceAccountSubjectSchema = object(`${P}ServiceAccountSubject`, {
  namespace: req(1, t.string(), 'The namespace of matching ServiceAccount objects.'),
  name: req(2, t.string(), 'The name of matching ServiceAccount objects, or "*" to match regardless of name.'),
});

/** Who a rule applies to: a user, a group or a service account. */
export const FlowSubjectSchema = object(`${P}Subject`, {
  kind: req(1, t.string(), '`kind` is User, Group or ServiceAccount.'),
  user: opt(2, ref(UserSubjectSchema)),
  group: opt(3, ref(GroupSubjectSchema)),
  serviceAccount: opt(4, ref(ServiceAccountSubjectSchema)),
});
/** A Subject of a FlowSchema rule. */
export type FlowSubject = Static<typeof FlowSubjectSchema>;

const ResourcePolicyRuleSchema = object(`${P}ResourcePolicyRule`, {
  verbs: req(1, t.array(t.string(), { listType: 'set' }), 'Matching verbs; "*" matches all.'),
  apiGroups: req(2, t.array(t.string(), { listType: 'set' }), 'Matching API groups; "*" matches all.'),
  resources: req(3, t.array(t.string(), { listType: 'set' }), 'Matching resources (with subresource); "*" all.'),
  clusterScope: opt(4, t.bool(), 'Whether requests that name no namespace match.'),
  namespaces: opt(5, t.array(t.string(), { listType: 'set' }), 'Matching namespaces; "*" matches any namespace.'),
});
/** A resource rule of a FlowSchema. */
export type ResourcePolicyRule = Static<typeof ResourcePolicyRuleSchema>;

const NonResourcePolicyRuleSchema = object(`${P}NonResourcePolicyRule`, {
  verbs: req(1, t.array(t.string(), { listType: 'set' }), 'Matching verbs; "*" matches all.'),
  nonResourceURLs: req(6, t.array(t.string(), { listType: 'set' }), 'Matching URL paths or `/prefix/*`; "*" all.'),
});
/** A non-resource rule of a FlowSchema. */
export type NonResourcePolicyRule = Static<typeof NonResourcePolicyRuleSchema>;

const PolicyRulesWithSubjectsSchema = object(`${P}PolicyRulesWithSubjects`, {
  subjects: req(1, t.array(ref(FlowSubjectSchema), { listType: 'atomic' }), 'Who the rules apply to.'),
  resourceRules: opt(2, t.array(ref(ResourcePolicyRuleSchema), { listType: 'atomic' })),
  nonResourceRules: opt(3, t.array(ref(NonResourcePolicyRuleSchema), { listType: 'atomic' })),
});
/** One rule of a FlowSchema: subjects and what they do. */
export type PolicyRulesWithSubjects = Static<typeof PolicyRulesWithSubjectsSchema>;

const FlowSchemaSpecSchema = object(`${P}FlowSchemaSpec`, {
  priorityLevelConfiguration: req(
    1,
    ref(object(`${P}PriorityLevelConfigurationReference`, { name: req(1, t.string()) })),
    'The priority level of the requests this schema matches.',
  ),
  matchingPrecedence: opt(2, t.int32(), 'Lower values are matched first; 1 to 10000, 1000 by default.'),
  distinguisherMethod: opt(
    3,
    ptr(ref(object(`${P}FlowDistinguisherMethod`, { type: req(1, t.string(), 'ByUser or ByNamespace.') }))),
    'How flows are told apart; unset: one flow.',
  ),
  rules: opt(4, t.array(ref(PolicyRulesWithSubjectsSchema), { listType: 'atomic' })),
});

const FlowSchemaConditionSchema = conditionSchema('FlowSchemaCondition');
/** A FlowSchema condition (`Dangling`). */
export type FlowSchemaCondition = Static<typeof FlowSchemaConditionSchema>;

/** FlowSchema, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const FlowSchemaSchema = object(
  `${P}FlowSchema`,
  {
    ...OBJECT_HEAD,
    spec: opt(2, ref(FlowSchemaSpecSchema), 'The specification of the desired behavior of a FlowSchema.'),
    status: opt(
      3,
      ref(
        object(`${P}FlowSchemaStatus`, {
          conditions: opt(
            1,
            t.array(ref(FlowSchemaConditionSchema), {
              patchMergeKey: 'type',
              patchStrategy: 'merge',
              listType: 'map',
              listMapKeys: ['type'],
            }),
          ),
        }),
      ),
      'The current status of a FlowSchema.',
    ),
  },
  { description: 'FlowSchema defines the schema of a group of flows.' },
);
/** A FlowSchema object in its JSON form. */
export type FlowSchema = Static<typeof FlowSchemaSchema>;

const QueuingConfigurationSchema = object(`${P}QueuingConfiguration`, {
  queues: opt(1, t.int32(), 'The number of queues; 64 by default.'),
  handSize: opt(2, t.int32(), 'The queues a flow is shuffle-sharded into; 8 by default.'),
  queueLengthLimit: opt(3, t.int32(), 'The requests that may wait in one queue; 50 by default.'),
});

const LimitedSchema = object(`${P}LimitedPriorityLevelConfiguration`, {
  assuredConcurrencyShares: opt(1, t.int32(), "This level's share of the server's concurrency; 30 by default."),
  limitResponse: opt(
    2,
    ref(
      object(`${P}LimitResponse`, {
        type: req(1, t.string(), 'Queue or Reject.'),
        queuing: opt(2, ptr(ref(QueuingConfigurationSchema))),
      }),
    ),
    'What to do with requests that cannot be executed right now.',
  ),
});

const PriorityLevelConditionSchema = conditionSchema('PriorityLevelConfigurationCondition');

/** PriorityLevelConfiguration, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const PriorityLevelConfigurationSchema = object(
  `${P}PriorityLevelConfiguration`,
  {
    ...OBJECT_HEAD,
    spec: opt(
      2,
      ref(
        object(`${P}PriorityLevelConfigurationSpec`, {
          type: req(1, t.string(), 'Exempt or Limited.'),
          limited: opt(2, ptr(ref(LimitedSchema)), 'How requests of a Limited level are limited.'),
        }),
      ),
      'The specification of the desired behavior of a priority level.',
    ),
    status: opt(
      3,
      ref(
        object(`${P}PriorityLevelConfigurationStatus`, {
          conditions: opt(
            1,
            t.array(ref(PriorityLevelConditionSchema), {
              patchMergeKey: 'type',
              patchStrategy: 'merge',
              listType: 'map',
              listMapKeys: ['type'],
            }),
          ),
        }),
      ),
      'The current status of a priority level.',
    ),
  },
  { description: 'PriorityLevelConfiguration represents the configuration of a priority level.' },
);
/** A PriorityLevelConfiguration object in its JSON form. */
export type PriorityLevelConfiguration = Static<typeof PriorityLevelConfigurationSchema>;

/** The FlowSchema kind: discovery facts, defaults and kube-apiserver's printer columns. */
export const FlowSchemaKind = defineKind({
  group: FLOWCONTROL_GROUP,
  version: 'v1beta1',
  kind: 'FlowSchema',
  plural: 'flowschemas',
  scope: 'Cluster',
  subresources: { status: { verbs: ['get', 'patch', 'update'] } },
  schema: FlowSchemaSchema,
  defaults(fs) {
    if (fs.spec) fs.spec.matchingPrecedence ??= 1000;
  },
  columns: [
    {
      name: 'PriorityLevel',
      type: 'string',
      description: 'The priority level of the requests this schema matches.',
      cell: (o) => o.spec?.priorityLevelConfiguration?.name ?? '',
    },
    {
      name: 'MatchingPrecedence',
      type: 'string',
      description: 'Lower values are matched first.',
      cell: (o) => o.spec?.matchingPrecedence ?? 0,
    },
    {
      name: 'DistinguisherMethod',
      type: 'string',
      description: 'How flows are told apart.',
      cell: (o) => o.spec?.distinguisherMethod?.type ?? '<none>',
    },
    AGE_COLUMN,
    {
      name: 'MissingPL',
      type: 'string',
      description: 'Whether the priority level this schema names is missing (its Dangling condition).',
      cell: (o) => o.status?.conditions?.find((c) => c.type === 'Dangling')?.status ?? '?',
    },
  ],
});

/** The PriorityLevelConfiguration kind: discovery facts, defaults and kube-apiserver's printer columns. */
export const PriorityLevelConfigurationKind = defineKind({
  group: FLOWCONTROL_GROUP,
  version: 'v1beta1',
  kind: 'PriorityLevelConfiguration',
  plural: 'prioritylevelconfigurations',
  scope: 'Cluster',
  subresources: { status: { verbs: ['get', 'patch', 'update'] } },
  schema: PriorityLevelConfigurationSchema,
  defaults(pl) {
    const limited = pl.spec?.limited;
    if (!limited) return;
    limited.assuredConcurrencyShares ??= 30;
    const queuing = limited.limitResponse?.queuing;
    if (queuing) {
      queuing.queues ??= 64;
      queuing.handSize ??= 8;
      queuing.queueLengthLimit ??= 50;
    }
  },
  columns: [
    { name: 'Type', type: 'string', description: 'Exempt or Limited.', cell: (o) => o.spec?.type ?? '' },
    {
      name: 'AssuredConcurrencyShares',
      type: 'string',
      description: "This level's share of the server's concurrency.",
      cell: (o) => o.spec?.limited?.assuredConcurrencyShares ?? '<none>',
    },
    {
      name: 'Queues',
      type: 'string',
      description: 'The number of queues.',
      cell: (o) => o.spec?.limited?.limitResponse?.queuing?.queues ?? '<none>',
    },
    {
      name: 'HandSize',
      type: 'string',
      description: 'The queues a flow is shuffle-sharded into.',
      cell: (o) => o.spec?.limited?.limitResponse?.queuing?.handSize ?? '<none>',
    },
    {
      name: 'QueueLengthLimit',
      type: 'string',
      description: 'The requests that may wait in one queue.',
      cell: (o) => o.spec?.limited?.limitResponse?.queuing?.queueLengthLimit ?? '<none>',
    },
    AGE_COLUMN,
  ],
});
