/**
 * The built-in kinds of the API, and the scheme that serves them.
 *
 * Layout: one folder per group and version (`core/v1`, `apps/v1`, `batch/v1`, `rbac/v1`, ...), one file per kind
 * (or per family of kinds that share their parts, like `rbac/v1/rbac.ts`), and a `types.ts` for the named
 * sub-types a group shares (core/v1's PodSpec tree). Each kind file holds:
 * - the schema, every named sub-type its own object() with the id `${schemaPrefix(group, version)}<GoTypeName>`
 *   and the Protobuf field numbers of Kubernetes 1.21's `generated.proto` (Go embedded structs through embed());
 * - `defineKind({...})` with the discovery facts (plural, short names, categories, scope, verbs, subresources),
 *   `defaults` (Kubernetes 1.21 defaulting; pod template defaults are shared in `core/v1/pod-defaults.ts`),
 *   `columns` (kubectl's printer columns; helpers in `printing.ts`) and `fields` (field selectors).
 *
 * Conventions the rest of the machinery relies on:
 * - A kind with `verbs: []` (Scale, Eviction, TokenRequest) has no resource of its own: it is only the body of
 *   a subresource (`<resource>/scale`, `pods/eviction`, `serviceaccounts/token`); discovery lists it only there.
 * - `persisted: false` marks kinds that are never stored (reviews, Scale, Eviction, TokenRequest).
 * - Groups that end in `.k8s.io` in Kubernetes end in `.platform` here; so do label prefixes such as
 *   `node-role.platform/<role>` (the Kubernetes spelling is read too, for tools that write it).
 *
 * To add a kind: write its file, export it below and add it to {@link BUILTIN_KINDS} at its discovery position;
 * `kinds.test.ts` then builds its Protobuf type and OpenAPI definition with every other kind.
 */
import { Scheme } from '../scheme/scheme';
import {
  MutatingWebhookConfigurationKind,
  ValidatingWebhookConfigurationKind,
} from './admissionregistration/v1/webhook';
import {
  MutatingWebhookConfigurationV1beta1Kind,
  ValidatingWebhookConfigurationV1beta1Kind,
} from './admissionregistration/v1beta1/webhook';
import {
  ClusterRoleBindingV1beta1Kind,
  ClusterRoleV1beta1Kind,
  EventsV1beta1EventKind,
  LeaseV1beta1Kind,
  PriorityClassV1beta1Kind,
  RoleBindingV1beta1Kind,
  RoleV1beta1Kind,
  TokenReviewV1beta1Kind,
} from './beta-versions';
import { CustomResourceDefinitionKind } from './apiextensions/v1/custom-resource-definition';
import { CustomResourceDefinitionV1beta1Kind } from './apiextensions/v1beta1/custom-resource-definition';
import { APIServiceKind, APIServiceV1beta1Kind } from './apiregistration/apiservice';
import { ControllerRevisionKind } from './apps/v1/controller-revision';
import { DaemonSetKind } from './apps/v1/daemon-set';
import { DeploymentKind } from './apps/v1/deployment';
import { ReplicaSetKind } from './apps/v1/replica-set';
import { StatefulSetKind } from './apps/v1/stateful-set';
import { TokenRequestKind, TokenReviewKind } from './authentication/v1/token';
import {
  LocalSubjectAccessReviewKind,
  SelfSubjectAccessReviewKind,
  SelfSubjectRulesReviewKind,
  SubjectAccessReviewKind,
} from './authorization/v1/reviews';
import {
  LocalSubjectAccessReviewV1beta1Kind,
  SelfSubjectAccessReviewV1beta1Kind,
  SelfSubjectRulesReviewV1beta1Kind,
  SubjectAccessReviewV1beta1Kind,
} from './authorization/v1beta1/reviews';
import { HorizontalPodAutoscalerKind, ScaleKind } from './autoscaling/v1/scale';
import { HorizontalPodAutoscalerV2beta1Kind } from './autoscaling/v2beta1/hpa';
import { HorizontalPodAutoscalerV2beta2Kind } from './autoscaling/v2beta2/hpa';
import { CronJobKind, CronJobV1beta1Kind } from './batch/cron-job';
import {
  CertificateSigningRequestKind,
  CertificateSigningRequestV1beta1Kind,
} from './certificates/certificate-signing-request';
import { JobKind } from './batch/v1/job';
import { LeaseKind } from './coordination/v1/lease';
import { BindingKind } from './core/v1/binding';
import { ConfigMapKind } from './core/v1/config-map';
import { EndpointsKind } from './core/v1/endpoints';
import { EventKind } from './core/v1/event';
import { LimitRangeKind } from './core/v1/limit-range';
import { NamespaceKind } from './core/v1/namespace';
import { NodeKind } from './core/v1/node';
import { PersistentVolumeClaimKind, PersistentVolumeKind } from './core/v1/persistent-volume';
import { PodKind } from './core/v1/pod';
import { PodTemplateKind } from './core/v1/pod-template';
import { ReplicationControllerKind } from './core/v1/replication-controller';
import { ResourceQuotaKind } from './core/v1/resource-quota';
import { SecretKind } from './core/v1/secret';
import { ServiceKind } from './core/v1/service';
import { ServiceAccountKind } from './core/v1/service-account';
import { EndpointSliceKind, EndpointSliceV1beta1Kind } from './discovery/endpoint-slice';
import { EventsV1EventKind } from './events/v1/event';
import { FlowSchemaKind, PriorityLevelConfigurationKind } from './flowcontrol/v1beta1/flowcontrol';
import {
  ExtensionsIngressKind,
  IngressClassKind,
  IngressClassV1beta1Kind,
  IngressKind,
  IngressV1beta1Kind,
} from './networking/ingress';
import { NetworkPolicyKind } from './networking/network-policy';
import { RuntimeClassKind, RuntimeClassV1beta1Kind } from './node/runtime-class';
import { EvictionKind, PodDisruptionBudgetKind, PodDisruptionBudgetV1beta1Kind } from './policy/pod-disruption-budget';
import { ClusterRoleBindingKind, ClusterRoleKind, RoleBindingKind, RoleKind } from './rbac/v1/rbac';
import { PriorityClassKind } from './scheduling/v1/priority-class';
import {
  CSIDriverKind,
  CSIDriverV1beta1Kind,
  CSINodeKind,
  CSINodeV1beta1Kind,
  CSIStorageCapacityKind,
  StorageClassKind,
  StorageClassV1beta1Kind,
  VolumeAttachmentKind,
  VolumeAttachmentV1beta1Kind,
} from './storage/storage';

export * from './meta-condition';
// formatLabels and formatLabelSelector are exported by the labels module (same output).
export { boolPtr, selectorString, workloadWideColumns } from './printing';
export * from './core/v1/types';
export * from './core/v1/pod-defaults';
export * from './core/v1/binding';
export * from './core/v1/config-map';
export * from './core/v1/endpoints';
export * from './core/v1/event';
export * from './core/v1/limit-range';
export * from './core/v1/namespace';
export * from './core/v1/node';
export * from './core/v1/persistent-volume';
export * from './core/v1/volume-binding';
export * from './core/v1/pod';
export * from './core/v1/pod-template';
export * from './core/v1/replication-controller';
export * from './core/v1/resource-quota';
export * from './core/v1/secret';
export * from './core/v1/service';
export * from './core/v1/service-account';
export * from './apps/v1/types';
export * from './apps/v1/controller-revision';
export * from './apps/v1/daemon-set';
export * from './apps/v1/deployment';
export * from './apps/v1/replica-set';
export * from './apps/v1/stateful-set';
export * from './autoscaling/v1/scale';
export * from './batch/v1/job';
export * from './batch/cron-job';
export * from './certificates/certificate-signing-request';
export * from './coordination/v1/lease';
export * from './rbac/v1/rbac';
export * from './discovery/endpoint-slice';
export * from './scheduling/v1/priority-class';
export * from './policy/pod-disruption-budget';
export * from './authorization/v1/reviews';
export * from './authorization/v1beta1/reviews';
export * from './authentication/v1/token';
export * from './admissionregistration/v1/webhook';
export * from './admissionregistration/v1beta1/webhook';
export * from './networking/ingress';
export * from './networking/network-policy';
export { ingressToV1, ingressToV1beta1 } from './networking/convert';
export * from './node/runtime-class';
export * from './storage/storage';
export { kindInVersion } from './versions';
export * from './beta-versions';
export * from './autoscaling/v2beta2/hpa';
export * from './autoscaling/v2beta2/convert';
export * from './autoscaling/v2beta1/hpa';
export * from './autoscaling/v2beta1/convert';
export * from './flowcontrol/v1beta1/flowcontrol';
export * from './apiregistration/apiservice';
export * from './metrics/v1beta1/metrics';
export * from './apiextensions/v1/custom-resource-definition';
export * from './apiextensions/v1beta1/custom-resource-definition';
export * from './apiextensions/custom-object';
export {
  EventSchema as EventsV1EventSchema,
  EventSeriesSchema as EventsV1EventSeriesSchema,
  EventsV1EventKind,
  type EventsV1Event,
} from './events/v1/event';
export { eventToEventsV1, eventsV1ToEvent } from './events/v1/convert';

/**
 * Every built-in kind, in discovery order: the core group first (resources sorted by name, as `/api/v1` lists
 * them), then the named groups in the order Kubernetes 1.21 lists them under `/apis`.
 */
export const BUILTIN_KINDS = [
  // core/v1
  BindingKind,
  ConfigMapKind,
  EndpointsKind,
  EventKind,
  LimitRangeKind,
  NamespaceKind,
  NodeKind,
  PersistentVolumeClaimKind,
  PersistentVolumeKind,
  PodKind,
  PodTemplateKind,
  ReplicationControllerKind,
  ResourceQuotaKind,
  SecretKind,
  ServiceAccountKind,
  ServiceKind,
  // apiregistration.platform/v1, apiregistration.platform/v1beta1
  APIServiceKind,
  APIServiceV1beta1Kind,
  // extensions/v1beta1
  ExtensionsIngressKind,
  // apps/v1
  ControllerRevisionKind,
  DaemonSetKind,
  DeploymentKind,
  ReplicaSetKind,
  StatefulSetKind,
  // events.platform/v1
  EventsV1EventKind,
  EventsV1beta1EventKind,
  // authentication.platform/v1
  TokenReviewKind,
  TokenRequestKind,
  TokenReviewV1beta1Kind,
  // authorization.platform/v1, authorization.platform/v1beta1
  LocalSubjectAccessReviewKind,
  SelfSubjectAccessReviewKind,
  SelfSubjectRulesReviewKind,
  SubjectAccessReviewKind,
  LocalSubjectAccessReviewV1beta1Kind,
  SelfSubjectAccessReviewV1beta1Kind,
  SelfSubjectRulesReviewV1beta1Kind,
  SubjectAccessReviewV1beta1Kind,
  // autoscaling/v1, autoscaling/v2beta1, autoscaling/v2beta2
  HorizontalPodAutoscalerKind,
  ScaleKind,
  HorizontalPodAutoscalerV2beta1Kind,
  HorizontalPodAutoscalerV2beta2Kind,
  // batch/v1, batch/v1beta1
  CronJobKind,
  JobKind,
  CronJobV1beta1Kind,
  // certificates.platform/v1, certificates.platform/v1beta1
  CertificateSigningRequestKind,
  CertificateSigningRequestV1beta1Kind,
  // networking.platform/v1, networking.platform/v1beta1
  IngressClassKind,
  IngressKind,
  NetworkPolicyKind,
  IngressClassV1beta1Kind,
  IngressV1beta1Kind,
  // policy/v1, policy/v1beta1
  PodDisruptionBudgetKind,
  EvictionKind,
  PodDisruptionBudgetV1beta1Kind,
  // rbac.authorization.platform/v1
  ClusterRoleBindingKind,
  ClusterRoleKind,
  RoleBindingKind,
  RoleKind,
  ClusterRoleBindingV1beta1Kind,
  ClusterRoleV1beta1Kind,
  RoleBindingV1beta1Kind,
  RoleV1beta1Kind,
  // storage.platform/v1, storage.platform/v1beta1
  CSIDriverKind,
  CSINodeKind,
  StorageClassKind,
  VolumeAttachmentKind,
  CSIDriverV1beta1Kind,
  CSINodeV1beta1Kind,
  CSIStorageCapacityKind,
  StorageClassV1beta1Kind,
  VolumeAttachmentV1beta1Kind,
  // admissionregistration.platform/v1, admissionregistration.platform/v1beta1
  MutatingWebhookConfigurationKind,
  ValidatingWebhookConfigurationKind,
  MutatingWebhookConfigurationV1beta1Kind,
  ValidatingWebhookConfigurationV1beta1Kind,
  // apiextensions.platform/v1, apiextensions.platform/v1beta1
  CustomResourceDefinitionKind,
  CustomResourceDefinitionV1beta1Kind,
  // scheduling.platform/v1
  PriorityClassKind,
  PriorityClassV1beta1Kind,
  // coordination.platform/v1
  LeaseKind,
  LeaseV1beta1Kind,
  // node.platform/v1, node.platform/v1beta1
  RuntimeClassKind,
  RuntimeClassV1beta1Kind,
  // discovery.platform/v1, discovery.platform/v1beta1
  EndpointSliceKind,
  EndpointSliceV1beta1Kind,
  // flowcontrol.apiserver.platform/v1beta1
  FlowSchemaKind,
  PriorityLevelConfigurationKind,
];

/** A new scheme holding every built-in kind. */
export function builtinScheme(): Scheme {
  return new Scheme().add(...BUILTIN_KINDS);
}
