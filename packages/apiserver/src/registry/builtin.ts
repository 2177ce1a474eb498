/**
 * The built-in resources' behaviour: for each kind, its strategy, delete strategy, name rules, status strategy and
 * special subresources (model: the `NewStorage` functions of Kubernetes 1.21's `pkg/registry/<group>/<resource>`).
 * The API server installs every kind of the scheme through this table: a main store with the kind's strategy, a
 * status store when the kind has a status subresource, and the storages the table builds for the others (scale,
 * binding, eviction, finalize). Virtual kinds (the reviews) get a create-only storage that stores nothing.
 *
 * A kind missing from the table gets the default strategy (generic metadata rules, status kept apart).
 */
import { type Kind, type NameValidator, validateNamespaceName, validatePathSegmentName } from '@platform/api';

import { customResourceDefinitionResource } from '../apiextensions/crd-strategy';
import { type TokenReviewer } from '../auth/authentication/authentication';
import { type ServiceAccountTokenIssuer } from '../auth/authentication/service-account';
import { type Authorizer, type RuleSource } from '../auth/authorizer';

import { apiServiceStatusStrategy, apiServiceStrategy } from '../aggregator/apiservice-strategy';
import { webhookConfigurationStrategy } from './admissionregistration/webhookconfiguration/strategy';
import { daemonSetStrategy } from './apps/daemonset/strategy';
import { deploymentStrategy } from './apps/deployment/strategy';
import { replicaCountsStatusStrategy, replicaSetStrategy } from './apps/replicaset/strategy';
import { statefulSetStrategy } from './apps/statefulset/strategy';
import { TokenReviewREST } from './authentication/tokenreview/rest';
import { AccessReviewREST } from './authorization/subjectaccessreview/rest';
import { ScaleREST } from './autoscaling/scale/scale-rest';
import { cronJobStrategy } from './batch/cronjob/strategy';
import { csrApprovalStrategy, csrStatusStrategy, csrStrategy } from './certificates/certificatesigningrequest/strategy';
import { jobStrategy } from './batch/job/strategy';
import { leaseStrategy } from './coordination/lease/strategy';
import { configMapStrategy } from './core/configmap/strategy';
import { eventStrategy } from './core/event/strategy';
import { eventsV1Strategy } from './events/event/strategy';
import { limitRangeStrategy } from './core/limitrange/strategy';
import { nodeStrategy } from './core/node/strategy';
import { persistentVolumeClaimStrategy, persistentVolumeStrategy } from './core/persistentvolume/strategy';
import { replicationControllerStrategy } from './core/replicationcontroller/strategy';
import { resourceQuotaStatusStrategy, resourceQuotaStrategy } from './core/resourcequota/strategy';
import { secretStrategy } from './core/secret/strategy';
import { cidrRange, portRange, RangeAllocator } from './core/service/allocator';
import { ServiceStore } from './core/service/storage';
import { serviceStrategy } from './core/service/strategy';
import { TokenREST } from './core/serviceaccount/token';
import { type AgentTransport, PodConnectREST } from './core/pod/agent-proxy';
import { BindingREST } from './core/pod/binding';
import { EvictionREST } from './core/pod/eviction';
import { podStatusStrategy, podStrategy, POD_DELETE_STRATEGY } from './core/pod/strategy';
import {
  NAMESPACE_DELETE_STRATEGY,
  namespaceFinalizeStrategy,
  namespaceStatusStrategy,
  namespaceStrategy,
} from './core/namespace/strategy';
import { endpointSliceStrategy } from './discovery/endpointslice/strategy';
import { defaultStrategy, statusStrategy } from './generic/default-strategy';
import { type ObjectStorage } from './generic/storage-interface';
import { GenericStore, type StoreDefinition } from './generic/store';
import { podDisruptionBudgetStrategy } from './policy/poddisruptionbudget/strategy';
import { clusterRoleStrategy, roleStrategy } from './rbac/clusterrole/strategy';
import { escalationContext, PolicyBasedStore } from './rbac/escalation';
import { clusterRoleBindingStrategy, roleBindingStrategy } from './rbac/rolebinding/strategy';
import { type CreateStrategy, type DeleteStrategy, type RestStorage, type UpdateStrategy } from './rest/rest';
import { PriorityClassStore, priorityClassStrategy } from './scheduling/priorityclass/strategy';
import { ingressClassStrategy, ingressStrategy, networkPolicyStrategy } from './networking/strategy';
import { runtimeClassStrategy } from './node/runtimeclass';
import {
  csiDriverStrategy,
  csiNodeStrategy,
  csiStorageCapacityStrategy,
  storageClassStrategy,
  volumeAttachmentStatusStrategy,
  volumeAttachmentStrategy,
} from './storage/strategy';
import { FLOWCONTROL_RESOURCES } from './flowcontrol/strategy';

/** What a storage builder may reach while the API server installs its resources. */
export interface InstallContext {
  /**
   * The main store definition of a resource (`group`, plural `resource`), once installed; undefined when the
   * resource is not served. Call it when a request comes, not while building: resources install in scheme order.
   */
  definitionOf(group: string, resource: string): StoreDefinition | undefined;
  /** The kind `apiVersion`/`kind` of the scheme (the body kind of a subresource). */
  kindFor(apiVersion: string, kind: string): Kind | undefined;
  /** A storage of JSON objects at keys of their own (the range allocations of services). */
  rangeStorage: ObjectStorage;
  /** `--store-prefix`: range allocations live under `<prefix>/ranges/`. */
  storePrefix: string;
  /** `--service-cluster-ip-range`: one CIDR, or two of different families (dual stack), comma-separated. */
  serviceClusterIPRange: string;
  /** `--service-node-port-range` (`<low>-<high>`). */
  serviceNodePortRange: string;
  /** Answers TokenReviews with the server's token methods; unset: reviews say token authentication is off. */
  tokenReviewer?: TokenReviewer;
  /** Signs the tokens of `serviceaccounts/<name>/token`; unset: that subresource is not served. */
  serviceAccountTokens?: ServiceAccountTokenIssuer;
  /** The server's authorizer chain (access reviews; the `escalate` and `bind` checks of RBAC writes). */
  authorizer: Authorizer;
  /** The RBAC rules of the server's registry, in memory (escalation checks). */
  rbacRules: RuleSource;
  /** How `pods/log`, `pods/exec`, `pods/attach` and `pods/portforward` reach node agents (`--agent-*`). */
  agentTransport: AgentTransport;
}

/** Kubernetes' defaults of `--service-cluster-ip-range` and `--service-node-port-range`. */
export const DEFAULT_SERVICE_CLUSTER_IP_RANGE = '10.0.0.0/24';
/** The default `--service-node-port-range`. */
export const DEFAULT_SERVICE_NODE_PORT_RANGE = '30000-32767';

/** What a subresource builder gets: the parent's kind, main store and store definition, and the install context. */
export interface SubresourceContext extends InstallContext {
  /** The kind of the parent resource. */
  kind: Kind;
  /** The kind of the subresource's body (the parent kind when the subresource declares none). */
  bodyKind: Kind;
  main: GenericStore;
  definition: StoreDefinition;
}

/** Builds the storage of one subresource. */
export type SubresourceBuilder = (c: SubresourceContext) => RestStorage | undefined;

/** A stored resource's behaviour. */
export interface BuiltinResource {
  strategy: CreateStrategy & UpdateStrategy;
  deleteStrategy?: DeleteStrategy;
  /** How names are checked (default: DNS-1123 subdomain). */
  nameValidator?: NameValidator;
  /** The strategy of the `status` subresource, when the kind has one (default: only status changes). */
  status?: UpdateStrategy;
  /** The other subresources this table serves; a subresource of the kind missing here is not served. */
  subresources?: Record<string, SubresourceBuilder>;
  /** Builds the main store, when the resource needs more than the generic store (default: a GenericStore). */
  store?: (definition: StoreDefinition, c: InstallContext) => GenericStore;
}

/** A resource that stores nothing: its storage is built once from its kind and the install context. */
export interface VirtualResource {
  virtual: (kind: Kind, c: InstallContext) => RestStorage;
}

/** An update strategy that changes nothing itself: the caller computes the whole new object (binding). */
const PASS_THROUGH: UpdateStrategy = {
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  prepareForUpdate: () => {},
  validateUpdate: () => [],
};

function storeWith(definition: StoreDefinition, updateStrategy: UpdateStrategy): GenericStore {
  return new GenericStore({ ...definition, updateStrategy });
}

function scale(): SubresourceBuilder {
  return (c) => new ScaleREST(c.bodyKind, c.kind, c.main);
}

/** The escalation checks of the RBAC stores, from the install context. */
function rbacEscalation(c: InstallContext): ReturnType<typeof escalationContext> {
  return escalationContext(c.authorizer, c.rbacRules, c.definitionOf);
}

type Entry = (kind: Kind) => BuiltinResource | VirtualResource;

const TABLE: Record<string, Entry> = {
  '/namespaces': (kind) => ({
    strategy: namespaceStrategy(kind),
    deleteStrategy: NAMESPACE_DELETE_STRATEGY,
    nameValidator: validateNamespaceName,
    status: namespaceStatusStrategy(),
    subresources: {
      finalize: (c) => storeWith(c.definition, namespaceFinalizeStrategy()),
    },
  }),
  '/pods': (kind) => ({
    strategy: podStrategy(kind),
    deleteStrategy: POD_DELETE_STRATEGY,
    status: podStatusStrategy(),
    subresources: {
      binding: (c) => {
        const pods = storeWith(c.definition, PASS_THROUGH);
        return new BindingREST(c.bodyKind, () => pods);
      },
      ...Object.fromEntries(
        (['log', 'exec', 'attach', 'portforward'] as const).map((sub): [string, SubresourceBuilder] => [
          sub,
          (c) => {
            let nodes: GenericStore | undefined;
            const nodeStore = (): GenericStore | undefined => {
              const d = c.definitionOf('', 'nodes');
              return (nodes ??= d && new GenericStore(d));
            };
            return new PodConnectREST(c.bodyKind, sub, c.main, nodeStore, () => c.agentTransport);
          },
        ]),
      ),
      eviction: (c) =>
        new EvictionREST(c.bodyKind, c.main, () => {
          const pdb = c.definitionOf('policy', 'poddisruptionbudgets');
          return pdb && storeWith(pdb, statusStrategy());
        }),
    },
  }),
  '/bindings': () => ({
    virtual: (kind, c) =>
      new BindingREST(kind, () => {
        const pods = c.definitionOf('', 'pods');
        return pods && storeWith(pods, PASS_THROUGH);
      }),
  }),
  '/endpoints': (kind) => ({ strategy: defaultStrategy(kind, { allowCreateOnUpdate: true }) }),
  '/configmaps': (kind) => ({ strategy: configMapStrategy(kind) }),
  '/secrets': (kind) => ({ strategy: secretStrategy(kind) }),
  '/services': (kind) => ({
    strategy: serviceStrategy(kind),
    store: (definition, c) =>
      new ServiceStore(definition, {
        // The primary range at `serviceips`, a second (other family) one at `secondaryserviceips`.
        clusterIPs: c.serviceClusterIPRange.split(',').map((cidr, i) => {
          const name = i === 0 ? 'serviceips' : 'secondaryserviceips';
          return new RangeAllocator(cidrRange(cidr), c.rangeStorage, `${c.storePrefix}/ranges/${name}`, name);
        }),
        nodePorts: new RangeAllocator(
          portRange(c.serviceNodePortRange),
          c.rangeStorage,
          `${c.storePrefix}/ranges/servicenodeports`,
          'servicenodeports',
        ),
      }),
  }),
  '/nodes': (kind) => ({ strategy: nodeStrategy(kind) }),
  '/events': (kind) => ({ strategy: eventStrategy(kind) }),
  'events.platform/events': (kind) => ({ strategy: eventsV1Strategy(kind) }),
  '/limitranges': (kind) => ({ strategy: limitRangeStrategy(kind) }),
  '/resourcequotas': (kind) => ({ strategy: resourceQuotaStrategy(kind), status: resourceQuotaStatusStrategy() }),
  '/persistentvolumes': (kind) => ({ strategy: persistentVolumeStrategy(kind) }),
  '/persistentvolumeclaims': (kind) => ({ strategy: persistentVolumeClaimStrategy(kind) }),
  '/replicationcontrollers': (kind) => ({
    strategy: replicationControllerStrategy(kind),
    status: replicaCountsStatusStrategy(),
    subresources: { scale: scale() },
  }),
  'apps/deployments': (kind) => ({
    strategy: deploymentStrategy(kind),
    status: replicaCountsStatusStrategy(),
    subresources: { scale: scale() },
  }),
  'apps/replicasets': (kind) => ({
    strategy: replicaSetStrategy(kind),
    status: replicaCountsStatusStrategy(),
    subresources: { scale: scale() },
  }),
  'apps/statefulsets': (kind) => ({
    strategy: statefulSetStrategy(kind),
    status: replicaCountsStatusStrategy(),
    subresources: { scale: scale() },
  }),
  'apps/daemonsets': (kind) => ({ strategy: daemonSetStrategy(kind), status: replicaCountsStatusStrategy() }),
  'batch/jobs': (kind) => ({ strategy: jobStrategy(kind), status: replicaCountsStatusStrategy() }),
  'batch/cronjobs': (kind) => ({ strategy: cronJobStrategy(kind) }),
  'certificates.platform/certificatesigningrequests': (kind) => ({
    strategy: csrStrategy(kind),
    // 1.21 does not care what certificate requests are called: any name that fits in a path.
    nameValidator: validatePathSegmentName,
    status: csrStatusStrategy(kind),
    subresources: { approval: (c) => storeWith(c.definition, csrApprovalStrategy(kind)) },
  }),
  'rbac.authorization.platform/clusterroles': (kind) => ({
    strategy: clusterRoleStrategy(kind),
    nameValidator: validatePathSegmentName,
    store: (definition, c) => new PolicyBasedStore(definition, 'clusterroles', rbacEscalation(c)),
  }),
  'rbac.authorization.platform/roles': (kind) => ({
    strategy: roleStrategy(kind),
    nameValidator: validatePathSegmentName,
    store: (definition, c) => new PolicyBasedStore(definition, 'roles', rbacEscalation(c)),
  }),
  'rbac.authorization.platform/clusterrolebindings': (kind) => ({
    strategy: clusterRoleBindingStrategy(kind),
    nameValidator: validatePathSegmentName,
    store: (definition, c) => new PolicyBasedStore(definition, 'clusterrolebindings', rbacEscalation(c)),
  }),
  'rbac.authorization.platform/rolebindings': (kind) => ({
    strategy: roleBindingStrategy(kind),
    nameValidator: validatePathSegmentName,
    store: (definition, c) => new PolicyBasedStore(definition, 'rolebindings', rbacEscalation(c)),
  }),
  '/serviceaccounts': (kind) => ({
    strategy: defaultStrategy(kind),
    subresources: {
      token: (c) => {
        const issuer = c.serviceAccountTokens;
        if (!issuer) return undefined;
        return new TokenREST(c.bodyKind, c.main, issuer, (resource) => {
          const d = c.definitionOf('', resource);
          return d && new GenericStore(d);
        });
      },
    },
  }),
  'coordination.platform/leases': (kind) => ({ strategy: leaseStrategy(kind) }),
  'admissionregistration.platform/mutatingwebhookconfigurations': (kind) => ({
    strategy: webhookConfigurationStrategy(kind),
  }),
  'admissionregistration.platform/validatingwebhookconfigurations': (kind) => ({
    strategy: webhookConfigurationStrategy(kind),
  }),
  'scheduling.platform/priorityclasses': (kind) => ({
    strategy: priorityClassStrategy(kind),
    store: (definition) => new PriorityClassStore(definition),
  }),
  ...FLOWCONTROL_RESOURCES,
  'networking.platform/ingresses': (kind) => ({ strategy: ingressStrategy(kind) }),
  'extensions/ingresses': (kind) => ({ strategy: ingressStrategy(kind) }),
  'networking.platform/ingressclasses': (kind) => ({ strategy: ingressClassStrategy(kind) }),
  'networking.platform/networkpolicies': (kind) => ({ strategy: networkPolicyStrategy(kind) }),
  'node.platform/runtimeclasses': (kind) => ({ strategy: runtimeClassStrategy(kind) }),
  'storage.platform/storageclasses': (kind) => ({ strategy: storageClassStrategy(kind) }),
  'storage.platform/csidrivers': (kind) => ({ strategy: csiDriverStrategy(kind) }),
  'storage.platform/csinodes': (kind) => ({ strategy: csiNodeStrategy(kind) }),
  'storage.platform/volumeattachments': (kind) => ({
    strategy: volumeAttachmentStrategy(kind),
    status: volumeAttachmentStatusStrategy(),
  }),
  'storage.platform/csistoragecapacities': (kind) => ({ strategy: csiStorageCapacityStrategy(kind) }),
  'policy/poddisruptionbudgets': (kind) => ({ strategy: podDisruptionBudgetStrategy(kind) }),
  'apiextensions.platform/customresourcedefinitions': (kind) => customResourceDefinitionResource(kind),
  'apiregistration.platform/apiservices': (kind) => ({
    strategy: apiServiceStrategy(kind),
    nameValidator: validatePathSegmentName,
    status: apiServiceStatusStrategy(),
  }),
  'discovery.platform/endpointslices': (kind) => ({ strategy: endpointSliceStrategy(kind) }),
  'authorization.platform/subjectaccessreviews': () => ({
    virtual: (kind, c) => new AccessReviewREST(kind, c.authorizer),
  }),
  'authorization.platform/selfsubjectaccessreviews': () => ({
    virtual: (kind, c) => new AccessReviewREST(kind, c.authorizer),
  }),
  'authorization.platform/localsubjectaccessreviews': () => ({
    virtual: (kind, c) => new AccessReviewREST(kind, c.authorizer),
  }),
  'authorization.platform/selfsubjectrulesreviews': () => ({
    virtual: (kind, c) => new AccessReviewREST(kind, c.authorizer),
  }),
  'authentication.platform/tokenreviews': () => ({ virtual: (kind, c) => new TokenReviewREST(kind, c.tokenReviewer) }),
};

/** Whether an entry of the table is a virtual resource. */
export function isVirtualResource(r: BuiltinResource | VirtualResource): r is VirtualResource {
  return 'virtual' in r;
}

/**
 * The behaviour of a kind: its table entry, or the default strategy. Undefined for kinds that are only the body
 * of a subresource (`verbs: []`: Scale, Eviction, TokenRequest), which have no resource of their own.
 */
export function builtinResource(kind: Kind): BuiltinResource | VirtualResource | undefined {
  if (kind.verbs.length === 0) return undefined;
  const entry = TABLE[`${kind.group}/${kind.plural}`];
  if (entry) return entry(kind);
  return { strategy: defaultStrategy(kind) };
}
