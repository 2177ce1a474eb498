/**
 * The default RBAC policy the API server bootstraps (model: Kubernetes 1.21
 * `plugin/pkg/auth/authorizer/rbac/bootstrappolicy`: `policy.go`, `controller_policy.go`, `namespace_policy.go`),
 * renamed to this platform: `.k8s.io` groups end in `.platform`, `kubernetes.io/` labels and annotations become
 * `platform.io/` ones, `kube-system` / `kube-public` are `system` / `public`, and the `kube-*` components are ours
 * (`system:platform-controller-manager`, `system:platform-scheduler`, `system:platform-proxy`, the node agent).
 *
 * Pure data: {@link clusterRoles}, {@link clusterRoleBindings}, {@link namespaceRoles} and
 * {@link namespaceRoleBindings} build fresh objects on every call (callers may mutate them). Every object carries
 * the label {@link BOOTSTRAPPING_LABEL} and the annotation {@link AUTOUPDATE_ANNOTATION} `"true"`.
 */
import {
  type ClusterRole,
  type ClusterRoleBinding,
  type PolicyRule,
  RBAC_GROUP,
  type Role,
  type RoleBinding,
  type Subject,
} from '@platform/api';

/** Label on every bootstrap object (Kubernetes' `kubernetes.io/bootstrapping: rbac-defaults`). */
export const BOOTSTRAPPING_LABEL = { key: 'platform.io/bootstrapping', value: 'rbac-defaults' } as const;
/** `"false"` here stops the bootstrap from changing the object again (Kubernetes' autoupdate annotation). */
export const AUTOUPDATE_ANNOTATION = `${RBAC_GROUP}/autoupdate`;
/** The labels that aggregate a ClusterRole into `admin`, `edit` and `view`. */
export const AGGREGATE_TO_ADMIN = `${RBAC_GROUP}/aggregate-to-admin`;
export const AGGREGATE_TO_EDIT = `${RBAC_GROUP}/aggregate-to-edit`;
export const AGGREGATE_TO_VIEW = `${RBAC_GROUP}/aggregate-to-view`;

/** The namespace of the system components (Kubernetes' kube-system). */
export const SYSTEM_NAMESPACE = 'system';
/** The publicly readable namespace (Kubernetes' kube-public). */
export const PUBLIC_NAMESPACE = 'public';

/** The users of the system components. */
export const CONTROLLER_MANAGER_USER = 'system:platform-controller-manager';
export const SCHEDULER_USER = 'system:platform-scheduler';
export const PROXY_USER = 'system:platform-proxy';
/** The leader-election lock names of Document 2 (`--leader-elect-resource-name` defaults). */
const CONTROLLER_MANAGER_LOCK = 'controller-manager';
const SCHEDULER_LOCK = 'scheduler';

const CORE = '';
const APPS = 'apps';
const AUTOSCALING = 'autoscaling';
const BATCH = 'batch';
const POLICY = 'policy';
const AUTHENTICATION = 'authentication.platform';
const AUTHORIZATION = 'authorization.platform';
const CERTIFICATES = 'certificates.platform';
const COORDINATION = 'coordination.platform';
const DISCOVERY = 'discovery.platform';
const EVENTS = 'events.platform';
const NETWORKING = 'networking.platform';
const NODE = 'node.platform';
const STORAGE = 'storage.platform';

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const READ_WRITE = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];

/** A rule on resources. */
function rule(verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): PolicyRule {
  return {
    verbs: [...verbs],
    apiGroups: [...apiGroups],
    resources: [...resources],
    ...(resourceNames ? { resourceNames } : {}),
  };
}

/** A rule on non-resource URLs. */
function urls(verbs: string[], nonResourceURLs: string[]): PolicyRule {
  return { verbs: [...verbs], nonResourceURLs: [...nonResourceURLs] };
}

/** Writing events, in both event groups. */
function eventsRule(): PolicyRule {
  return rule(['create', 'update', 'patch'], [CORE, EVENTS], ['events']);
}

function metadata(name: string, labels: Record<string, string> = {}, namespace?: string): ClusterRole['metadata'] {
  return {
    name,
    ...(namespace ? { namespace } : {}),
    labels: { [BOOTSTRAPPING_LABEL.key]: BOOTSTRAPPING_LABEL.value, ...labels },
    annotations: { [AUTOUPDATE_ANNOTATION]: 'true' },
  };
}

function clusterRole(name: string, rules: PolicyRule[], labels: Record<string, string> = {}): ClusterRole {
  return { apiVersion: `${RBAC_GROUP}/v1`, kind: 'ClusterRole', metadata: metadata(name, labels), rules };
}

function aggregatedRole(name: string, selectorLabel: string, labels: Record<string, string> = {}): ClusterRole {
  return {
    ...clusterRole(name, [], labels),
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [selectorLabel]: 'true' } }] },
  };
}

/** A User or Group subject. */
function principal(kind: 'User' | 'Group', name: string): Subject {
  return { kind, apiGroup: RBAC_GROUP, name };
}

/** A ServiceAccount subject. */
function serviceAccount(namespace: string, name: string): Subject {
  return { kind: 'ServiceAccount', name, namespace };
}

function clusterBinding(role: string, subjects: Subject[]): ClusterRoleBinding {
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: metadata(role),
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: role },
    subjects,
  };
}

/** The controllers the controller manager runs, each with its own ServiceAccount in `system` and role. */
function controllerRoles(): Record<string, PolicyRule[]> {
  return {
    'attachdetach-controller': [
      rule(['list', 'watch'], [CORE], ['persistentvolumes', 'persistentvolumeclaims']),
      rule(READ, [CORE], ['nodes']),
      rule(['patch', 'update'], [CORE], ['nodes/status']),
      rule(['list', 'watch'], [CORE], ['pods']),
      eventsRule(),
      rule(['create', 'delete', 'get', 'list', 'watch'], [STORAGE], ['volumeattachments']),
      rule(READ, [STORAGE], ['csidrivers']),
      rule(READ, [STORAGE], ['csinodes']),
    ],
    'clusterrole-aggregation-controller': [
      rule(['escalate', 'get', 'list', 'watch', 'update', 'patch'], [RBAC_GROUP], ['clusterroles']),
    ],
    'cronjob-controller': [
      rule(['get', 'list', 'watch', 'update'], [BATCH], ['cronjobs']),
      rule(['get', 'list', 'watch', 'create', 'update', 'delete', 'patch'], [BATCH], ['jobs']),
      rule(['update'], [BATCH], ['cronjobs/status']),
      rule(['update'], [BATCH], ['cronjobs/finalizers']),
      rule(['list', 'delete'], [CORE], ['pods']),
      eventsRule(),
    ],
    'daemon-set-controller': [
      rule(READ, [APPS], ['daemonsets']),
      rule(['update'], [APPS], ['daemonsets/status']),
      rule(['update'], [APPS], ['daemonsets/finalizers']),
      rule(READ, [CORE], ['nodes']),
      rule(['list', 'watch', 'create', 'delete', 'patch'], [CORE], ['pods']),
      rule(['create'], [CORE], ['pods/binding']),
      rule(['get', 'list', 'watch', 'create', 'delete', 'update', 'patch'], [APPS], ['controllerrevisions']),
      eventsRule(),
    ],
    'deployment-controller': [
      rule(['get', 'list', 'watch', 'update'], [APPS], ['deployments']),
      rule(['update'], [APPS], ['deployments/status']),
      rule(['update'], [APPS], ['deployments/finalizers']),
      rule(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], [APPS], ['replicasets']),
      // The deployment controller lists pods to decide about a Recreate rollout; it never writes them.
      rule(['get', 'list', 'watch', 'update'], [CORE], ['pods']),
      eventsRule(),
    ],
    'disruption-controller': [
      rule(READ, [APPS], ['deployments']),
      rule(READ, [APPS], ['replicasets']),
      rule(READ, [CORE], ['replicationcontrollers']),
      rule(READ, [POLICY], ['poddisruptionbudgets']),
      rule(READ, [APPS], ['statefulsets']),
      rule(['update'], [POLICY], ['poddisruptionbudgets/status']),
      rule(['get'], ['*'], ['*/scale']),
      eventsRule(),
    ],
    'endpoint-controller': [
      rule(READ, [CORE], ['services', 'pods']),
      rule(['get', 'list', 'create', 'update', 'delete'], [CORE], ['endpoints']),
      rule(['create'], [CORE], ['endpoints/restricted']),
      eventsRule(),
    ],
    'endpointslice-controller': [
      rule(READ, [CORE], ['services', 'pods', 'nodes']),
      rule(['get', 'list', 'create', 'update', 'delete'], [DISCOVERY], ['endpointslices']),
      eventsRule(),
    ],
    'endpointslicemirroring-controller': [
      rule(READ, [CORE], ['services', 'endpoints']),
      rule(['update'], [CORE], ['endpoints/finalizers']),
      rule(['get', 'list', 'create', 'update', 'delete'], [DISCOVERY], ['endpointslices']),
      eventsRule(),
    ],
    'expand-controller': [
      rule(['get', 'list', 'watch', 'update', 'patch'], [CORE], ['persistentvolumes']),
      rule(['update', 'patch'], [CORE], ['persistentvolumeclaims/status']),
      rule(READ, [CORE], ['persistentvolumeclaims']),
      rule(READ, [STORAGE], ['storageclasses']),
      rule(['get'], [CORE], ['endpoints', 'services']),
      rule(['get'], [CORE], ['secrets']),
      eventsRule(),
    ],
    'ephemeral-volume-controller': [
      rule(READ, [CORE], ['pods']),
      rule(['update'], [CORE], ['pods/finalizers']),
      rule(['get', 'list', 'watch', 'create'], [CORE], ['persistentvolumeclaims']),
      eventsRule(),
    ],
    'generic-garbage-collector': [rule(['get', 'list', 'watch', 'patch', 'update', 'delete'], ['*'], ['*'])],
    // 1.21's rules, and `patch` where our controller patches: it keeps autoscaling/v1's conditions in their
    // annotation itself (1.21 derives it by converting from the v2 status it updates), and merges scale and status.
    'horizontal-pod-autoscaler': [
      rule(READ, [AUTOSCALING], ['horizontalpodautoscalers']),
      rule(['patch'], [AUTOSCALING], ['horizontalpodautoscalers']),
      rule(['update', 'patch'], [AUTOSCALING], ['horizontalpodautoscalers/status']),
      rule(['get', 'update', 'patch'], ['*'], ['*/scale']),
      rule(['list'], [CORE], ['pods']),
      rule(['get', 'list'], ['metrics.platform'], ['pods']),
      rule(['get', 'list'], ['custom.metrics.platform'], ['*']),
      rule(['get', 'list'], ['external.metrics.platform'], ['*']),
      eventsRule(),
    ],
    'job-controller': [
      rule(['get', 'list', 'watch', 'update'], [BATCH], ['jobs']),
      rule(['update'], [BATCH], ['jobs/status']),
      rule(['update'], [BATCH], ['jobs/finalizers']),
      rule(['list', 'watch', 'create', 'delete', 'patch'], [CORE], ['pods']),
      eventsRule(),
    ],
    'namespace-controller': [
      rule(['get', 'list', 'watch', 'delete'], [CORE], ['namespaces']),
      rule(['update'], [CORE], ['namespaces/finalize', 'namespaces/status']),
      rule(['get', 'list', 'delete', 'deletecollection'], ['*'], ['*']),
    ],
    'node-controller': [
      rule(['get', 'list', 'update', 'delete', 'patch'], [CORE], ['nodes']),
      rule(['patch', 'update'], [CORE], ['nodes/status']),
      rule(['patch', 'update'], [CORE], ['pods/status']),
      rule(['list', 'delete'], [CORE], ['pods']),
      eventsRule(),
    ],
    'persistent-volume-binder': [
      rule(['get', 'list', 'watch', 'update', 'create', 'delete'], [CORE], ['persistentvolumes']),
      rule(['update'], [CORE], ['persistentvolumes/status']),
      rule(['get', 'list', 'watch', 'update'], [CORE], ['persistentvolumeclaims']),
      rule(['update'], [CORE], ['persistentvolumeclaims/status']),
      rule(['list', 'watch', 'get', 'create', 'delete'], [CORE], ['pods']),
      rule(READ, [STORAGE], ['storageclasses']),
      rule(['get', 'create', 'delete'], [CORE], ['services']),
      rule(['get'], [CORE], ['secrets']),
      rule(['get', 'list'], [CORE], ['nodes']),
      rule(['watch'], [CORE], ['events']),
      eventsRule(),
    ],
    'pod-garbage-collector': [
      rule(['list', 'watch', 'delete'], [CORE], ['pods']),
      rule(['get', 'list'], [CORE], ['nodes']),
    ],
    'replicaset-controller': [
      rule(['get', 'list', 'watch', 'update'], [APPS], ['replicasets']),
      rule(['update'], [APPS], ['replicasets/status']),
      rule(['update'], [APPS], ['replicasets/finalizers']),
      rule(['list', 'watch', 'patch', 'create', 'delete'], [CORE], ['pods']),
      eventsRule(),
    ],
    'replication-controller': [
      rule(['get', 'list', 'watch', 'update'], [CORE], ['replicationcontrollers']),
      rule(['update'], [CORE], ['replicationcontrollers/status']),
      rule(['update'], [CORE], ['replicationcontrollers/finalizers']),
      rule(['list', 'watch', 'patch', 'create', 'delete'], [CORE], ['pods']),
      eventsRule(),
    ],
    'resourcequota-controller': [
      rule(['list', 'watch'], ['*'], ['*']),
      rule(['update'], [CORE], ['resourcequotas/status']),
      eventsRule(),
    ],
    'route-controller': [rule(['list'], [CORE], ['nodes']), rule(['patch'], [CORE], ['nodes/status']), eventsRule()],
    'service-account-controller': [rule(['create'], [CORE], ['serviceaccounts']), eventsRule()],
    'service-controller': [
      rule(READ, [CORE], ['services']),
      rule(['patch', 'update'], [CORE], ['services/status']),
      rule(['list', 'watch'], [CORE], ['nodes']),
      eventsRule(),
    ],
    'statefulset-controller': [
      rule(['list', 'watch'], [CORE], ['pods']),
      rule(['list', 'watch'], [APPS], ['statefulsets']),
      rule(['get'], [APPS], ['statefulsets']),
      rule(['update'], [APPS], ['statefulsets/status']),
      rule(['update'], [APPS], ['statefulsets/finalizers']),
      rule(['get', 'create', 'delete', 'update', 'patch'], [CORE], ['pods']),
      rule(['get', 'create', 'delete', 'update', 'patch', 'list', 'watch'], [APPS], ['controllerrevisions']),
      rule(['get', 'create'], [CORE], ['persistentvolumeclaims']),
      eventsRule(),
    ],
    'ttl-controller': [rule(['update', 'patch', 'list', 'watch'], [CORE], ['nodes']), eventsRule()],
    'certificate-controller': [
      rule(['get', 'list', 'watch', 'delete'], [CERTIFICATES], ['certificatesigningrequests']),
      rule(['update'], [CERTIFICATES], ['certificatesigningrequests/status', 'certificatesigningrequests/approval']),
      rule(['approve'], [CERTIFICATES], ['signers'], ['platform.io/apiserver-client-node-agent']),
      rule(
        ['sign'],
        [CERTIFICATES],
        ['signers'],
        [
          'platform.io/legacy-unknown',
          'platform.io/apiserver-client',
          'platform.io/apiserver-client-node-agent',
          'platform.io/node-agent-serving',
        ],
      ),
      rule(['create'], [AUTHORIZATION], ['subjectaccessreviews']),
      eventsRule(),
    ],
    'pvc-protection-controller': [
      rule(['get', 'list', 'watch', 'update'], [CORE], ['persistentvolumeclaims']),
      rule(['list', 'watch', 'get'], [CORE], ['pods']),
      eventsRule(),
    ],
    'pv-protection-controller': [rule(['get', 'list', 'watch', 'update'], [CORE], ['persistentvolumes']), eventsRule()],
    'ttl-after-finished-controller': [rule(['get', 'list', 'watch', 'delete'], [BATCH], ['jobs']), eventsRule()],
    'root-ca-cert-publisher': [rule(['create', 'update'], [CORE], ['configmaps']), eventsRule()],
  };
}

/** The names of the controllers that get a `system:controller:<name>` role and binding. */
export function controllerNames(): string[] {
  return Object.keys(controllerRoles());
}

/**
 * The default ClusterRoles. `admin`, `edit` and `view` carry only their aggregation rule here; their rules come from
 * the ClusterRoles labelled to aggregate into them (the `system:aggregate-to-*` roles below, and `edit` into
 * `admin`, `view` into `edit`).
 */
export function clusterRoles(): ClusterRole[] {
  const roles: ClusterRole[] = [
    clusterRole('cluster-admin', [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])]),
    clusterRole('system:discovery', [
      urls(
        ['get'],
        [
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/openapi',
          '/openapi/*',
          '/readyz',
          '/version',
          '/version/',
        ],
      ),
    ]),
    clusterRole('system:monitoring', [
      urls(['get'], ['/healthz', '/healthz/*', '/livez', '/livez/*', '/metrics', '/readyz', '/readyz/*']),
    ]),
    clusterRole('system:basic-user', [
      rule(['create'], [AUTHORIZATION], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
    ]),
    clusterRole('system:public-info-viewer', [
      urls(['get'], ['/healthz', '/livez', '/readyz', '/version', '/version/']),
    ]),
    aggregatedRole('admin', AGGREGATE_TO_ADMIN),
    aggregatedRole('edit', AGGREGATE_TO_EDIT, { [AGGREGATE_TO_ADMIN]: 'true' }),
    aggregatedRole('view', AGGREGATE_TO_VIEW, { [AGGREGATE_TO_EDIT]: 'true' }),
    clusterRole(
      'system:aggregate-to-admin',
      [
        rule(['create'], [AUTHORIZATION], ['localsubjectaccessreviews']),
        rule(READ_WRITE, [RBAC_GROUP], ['roles', 'rolebindings']),
      ],
      { [AGGREGATE_TO_ADMIN]: 'true' },
    ),
    clusterRole(
      'system:aggregate-to-edit',
      [
        rule(READ, [CORE], ['pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward', 'secrets', 'services/proxy']),
        rule(['impersonate'], [CORE], ['serviceaccounts']),
        rule(WRITE, [CORE], ['pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward']),
        rule(['create'], [CORE], ['pods/eviction']),
        rule(
          WRITE,
          [CORE],
          [
            'replicationcontrollers',
            'replicationcontrollers/scale',
            'serviceaccounts',
            'services',
            'services/proxy',
            'endpoints',
            'persistentvolumeclaims',
            'configmaps',
            'secrets',
            'events',
          ],
        ),
        rule(
          WRITE,
          [APPS],
          [
            'statefulsets',
            'statefulsets/scale',
            'daemonsets',
            'deployments',
            'deployments/scale',
            'deployments/rollback',
            'replicasets',
            'replicasets/scale',
          ],
        ),
        rule(WRITE, [AUTOSCALING], ['horizontalpodautoscalers']),
        rule(WRITE, [BATCH], ['jobs', 'cronjobs']),
        rule(WRITE, [POLICY], ['poddisruptionbudgets']),
        rule(WRITE, [NETWORKING], ['networkpolicies', 'ingresses']),
      ],
      { [AGGREGATE_TO_EDIT]: 'true' },
    ),
    clusterRole(
      'system:aggregate-to-view',
      [
        rule(
          READ,
          [CORE],
          [
            'pods',
            'replicationcontrollers',
            'replicationcontrollers/scale',
            'serviceaccounts',
            'services',
            'services/status',
            'endpoints',
            'persistentvolumeclaims',
            'persistentvolumeclaims/status',
            'configmaps',
          ],
        ),
        rule(
          READ,
          [CORE],
          [
            'limitranges',
            'resourcequotas',
            'bindings',
            'events',
            'pods/status',
            'resourcequotas/status',
            'namespaces/status',
            'replicationcontrollers/status',
            'pods/log',
          ],
        ),
        // Read access to namespaces at the namespace scope means reading this namespace: a hint of where one has access.
        rule(READ, [CORE], ['namespaces']),
        rule(READ, [DISCOVERY], ['endpointslices']),
        rule(
          READ,
          [APPS],
          [
            'controllerrevisions',
            'statefulsets',
            'statefulsets/status',
            'statefulsets/scale',
            'daemonsets',
            'daemonsets/status',
            'deployments',
            'deployments/status',
            'deployments/scale',
            'replicasets',
            'replicasets/status',
            'replicasets/scale',
          ],
        ),
        rule(READ, [AUTOSCALING], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
        rule(READ, [BATCH], ['jobs', 'cronjobs', 'cronjobs/status', 'jobs/status']),
        rule(READ, [POLICY], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
        rule(READ, [NETWORKING], ['ingresses', 'ingresses/status', 'networkpolicies']),
      ],
      { [AGGREGATE_TO_VIEW]: 'true' },
    ),
    clusterRole('system:heapster', [
      rule(READ, [CORE], ['events', 'pods', 'nodes', 'namespaces']),
      rule(READ, [APPS], ['deployments']),
    ]),
    clusterRole('system:node', [
      rule(['create'], [AUTHENTICATION], ['tokenreviews']),
      rule(['create'], [AUTHORIZATION], ['subjectaccessreviews', 'localsubjectaccessreviews']),
      rule(READ, [CORE], ['services']),
      rule(['create', 'get', 'list', 'watch'], [CORE], ['nodes']),
      rule(['update', 'patch'], [CORE], ['nodes/status']),
      rule(['update', 'patch'], [CORE], ['nodes']),
      rule(['create', 'update', 'patch'], [CORE], ['events']),
      rule(READ, [CORE], ['pods']),
      rule(['create', 'delete'], [CORE], ['pods']),
      rule(['update', 'patch'], [CORE], ['pods/status']),
      rule(['create'], [CORE], ['pods/eviction']),
      rule(READ, [CORE], ['secrets', 'configmaps']),
      rule(['get'], [CORE], ['persistentvolumeclaims', 'persistentvolumes']),
      rule(['get'], [CORE], ['endpoints']),
      rule(['create', 'get', 'list', 'watch'], [CERTIFICATES], ['certificatesigningrequests']),
      rule(['get', 'create', 'update', 'patch', 'delete'], [COORDINATION], ['leases']),
      rule(['get'], [STORAGE], ['volumeattachments']),
      rule(['create'], [CORE], ['serviceaccounts/token']),
      rule(['get', 'update', 'patch'], [CORE], ['persistentvolumeclaims/status']),
      rule(READ, [STORAGE], ['csidrivers']),
      rule(['create', 'delete', 'get', 'patch', 'update'], [STORAGE], ['csinodes']),
      rule(READ, [NODE], ['runtimeclasses']),
    ]),
    clusterRole('system:node-proxier', [
      rule(['list', 'watch'], [CORE], ['services', 'endpoints']),
      rule(READ, [CORE], ['nodes']),
      eventsRule(),
      rule(['list', 'watch'], [DISCOVERY], ['endpointslices']),
    ]),
    clusterRole('system:node-problem-detector', [
      rule(['get'], [CORE], ['nodes']),
      rule(['patch'], [CORE], ['nodes/status']),
      eventsRule(),
    ]),
    clusterRole('system:node-bootstrapper', [
      rule(['create', 'get', 'list', 'watch'], [CERTIFICATES], ['certificatesigningrequests']),
    ]),
    clusterRole('system:auth-delegator', [
      rule(['create'], [AUTHENTICATION], ['tokenreviews']),
      rule(['create'], [AUTHORIZATION], ['subjectaccessreviews']),
    ]),
    clusterRole('system:platform-aggregator', [rule(READ, [CORE], ['services', 'endpoints'])]),
    clusterRole('system:platform-controller-manager', [
      eventsRule(),
      // Leader election on a Lease (Document 2's default lock).
      rule(['create'], [COORDINATION], ['leases']),
      rule(['get', 'update'], [COORDINATION], ['leases'], [CONTROLLER_MANAGER_LOCK]),
      // Leader election on an Endpoints lock.
      rule(['create'], [CORE], ['endpoints']),
      rule(['get', 'update'], [CORE], ['endpoints'], [CONTROLLER_MANAGER_LOCK]),
      // The service account token controller and the per-controller credentials.
      rule(['create'], [CORE], ['secrets', 'serviceaccounts']),
      rule(['delete'], [CORE], ['secrets']),
      rule(['get'], [CORE], ['namespaces', 'secrets', 'serviceaccounts', 'configmaps']),
      rule(['update'], [CORE], ['secrets', 'serviceaccounts']),
      // Delegated authentication and authorization.
      rule(['create'], [AUTHENTICATION], ['tokenreviews']),
      rule(['create'], [AUTHORIZATION], ['subjectaccessreviews']),
      // The shared informers.
      rule(['list', 'watch'], ['*'], ['*']),
      rule(['create'], [CORE], ['serviceaccounts/token']),
    ]),
    clusterRole('system:platform-dns', [rule(['list', 'watch'], [CORE], ['endpoints', 'services'])]),
    clusterRole('system:persistent-volume-provisioner', [
      rule(['get', 'list', 'watch', 'create', 'delete'], [CORE], ['persistentvolumes']),
      // Update lets the provisioner annotate the claims it handles.
      rule(['get', 'list', 'watch', 'update'], [CORE], ['persistentvolumeclaims']),
      rule(READ, [STORAGE], ['storageclasses']),
      rule(['watch'], [CORE], ['events']),
      eventsRule(),
    ]),
    clusterRole('system:certificates.platform:certificatesigningrequests:nodeclient', [
      rule(['create'], [CERTIFICATES], ['certificatesigningrequests/nodeclient']),
    ]),
    clusterRole('system:certificates.platform:certificatesigningrequests:selfnodeclient', [
      rule(['create'], [CERTIFICATES], ['certificatesigningrequests/selfnodeclient']),
    ]),
    clusterRole('system:certificates.platform:apiserver-client-approver', [
      rule(['approve'], [CERTIFICATES], ['signers'], ['platform.io/apiserver-client']),
    ]),
    clusterRole('system:certificates.platform:apiserver-client-node-agent-approver', [
      rule(['approve'], [CERTIFICATES], ['signers'], ['platform.io/apiserver-client-node-agent']),
    ]),
    clusterRole('system:certificates.platform:node-agent-serving-approver', [
      rule(['approve'], [CERTIFICATES], ['signers'], ['platform.io/node-agent-serving']),
    ]),
    clusterRole('system:certificates.platform:legacy-unknown-approver', [
      rule(['approve'], [CERTIFICATES], ['signers'], ['platform.io/legacy-unknown']),
    ]),
    clusterRole('system:node-agent-api-admin', [
      rule(READ, [CORE], ['nodes']),
      rule(['proxy'], [CORE], ['nodes']),
      rule(['*'], [CORE], ['nodes/proxy', 'nodes/metrics', 'nodes/stats', 'nodes/log']),
    ]),
    clusterRole('system:platform-scheduler', [
      eventsRule(),
      rule(['create'], [COORDINATION], ['leases']),
      rule(['get', 'update'], [COORDINATION], ['leases'], [SCHEDULER_LOCK]),
      rule(['create'], [CORE], ['endpoints']),
      rule(['get', 'update'], [CORE], ['endpoints'], [SCHEDULER_LOCK]),
      rule(READ, [CORE], ['nodes']),
      rule(['get', 'list', 'watch', 'delete'], [CORE], ['pods']),
      rule(['create'], [CORE], ['pods/binding', 'bindings']),
      rule(['patch', 'update'], [CORE], ['pods/status']),
      rule(READ, [CORE], ['replicationcontrollers', 'services']),
      rule(READ, [APPS], ['replicasets']),
      rule(READ, [APPS], ['statefulsets']),
      rule(READ, [POLICY], ['poddisruptionbudgets']),
      rule(READ, [CORE], ['persistentvolumeclaims', 'persistentvolumes']),
      rule(['create'], [AUTHENTICATION], ['tokenreviews']),
      rule(['create'], [AUTHORIZATION], ['subjectaccessreviews']),
      rule(READ, [STORAGE], ['csinodes']),
      // The namespaceSelector of pod affinity terms (1.21).
      rule(READ, [CORE], ['namespaces']),
    ]),
    clusterRole('system:volume-scheduler', [
      rule(['get', 'list', 'watch', 'update', 'patch'], [CORE], ['persistentvolumes']),
      rule(READ, [STORAGE], ['storageclasses']),
      rule(['get', 'list', 'watch', 'update', 'patch'], [CORE], ['persistentvolumeclaims']),
    ]),
    clusterRole('system:service-account-issuer-discovery', [
      urls(['get'], ['/.well-known/openid-configuration', '/openid/v1/jwks']),
    ]),
  ];
  for (const [name, rules] of Object.entries(controllerRoles()))
    roles.push(clusterRole(`system:controller:${name}`, rules));
  return roles;
}

/** The default ClusterRoleBindings. */
export function clusterRoleBindings(): ClusterRoleBinding[] {
  const bindings = [
    clusterBinding('cluster-admin', [principal('Group', 'system:masters')]),
    clusterBinding('system:monitoring', [principal('Group', 'system:monitoring')]),
    clusterBinding('system:discovery', [principal('Group', 'system:authenticated')]),
    clusterBinding('system:basic-user', [principal('Group', 'system:authenticated')]),
    clusterBinding('system:public-info-viewer', [
      principal('Group', 'system:authenticated'),
      principal('Group', 'system:unauthenticated'),
    ]),
    clusterBinding('system:node-proxier', [principal('User', PROXY_USER)]),
    clusterBinding('system:platform-controller-manager', [principal('User', CONTROLLER_MANAGER_USER)]),
    clusterBinding('system:platform-dns', [serviceAccount(SYSTEM_NAMESPACE, 'platform-dns')]),
    clusterBinding('system:platform-scheduler', [principal('User', SCHEDULER_USER)]),
    clusterBinding('system:volume-scheduler', [principal('User', SCHEDULER_USER)]),
    // Kept without subjects, as in Kubernetes: nodes are authorized by the Node authorizer.
    clusterBinding('system:node', []),
    clusterBinding('system:service-account-issuer-discovery', [principal('Group', 'system:serviceaccounts')]),
  ];
  for (const name of controllerNames())
    bindings.push(clusterBinding(`system:controller:${name}`, [serviceAccount(SYSTEM_NAMESPACE, name)]));
  return bindings;
}

function role(namespace: string, name: string, rules: PolicyRule[]): Role {
  return { apiVersion: `${RBAC_GROUP}/v1`, kind: 'Role', metadata: metadata(name, {}, namespace), rules };
}

function roleBinding(namespace: string, name: string, roleName: string, subjects: Subject[]): RoleBinding {
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'RoleBinding',
    metadata: metadata(name, {}, namespace),
    roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name: roleName },
    subjects,
  };
}

/** The default Roles of the `system` and `public` namespaces. */
export function namespaceRoles(): Role[] {
  return [
    role(SYSTEM_NAMESPACE, 'extension-apiserver-authentication-reader', [
      rule(READ, [CORE], ['configmaps'], ['extension-apiserver-authentication']),
    ]),
    role(SYSTEM_NAMESPACE, 'system::leader-locking-platform-controller-manager', [
      rule(['watch'], [CORE], ['configmaps']),
      rule(['get', 'update'], [CORE], ['configmaps'], [CONTROLLER_MANAGER_LOCK]),
      // Not in 1.21, whose configmaps lock then works only once an administrator created the ConfigMap.
      rule(['create'], [CORE], ['configmaps']),
    ]),
    role(SYSTEM_NAMESPACE, 'system::leader-locking-platform-scheduler', [
      rule(['watch'], [CORE], ['configmaps']),
      rule(['get', 'update'], [CORE], ['configmaps'], [SCHEDULER_LOCK]),
      // Not in 1.21, whose configmaps lock then works only once an administrator created the ConfigMap.
      rule(['create'], [CORE], ['configmaps']),
    ]),
    role(SYSTEM_NAMESPACE, 'system:controller:bootstrap-signer', [rule(READ, [CORE], ['secrets'])]),
    role(SYSTEM_NAMESPACE, 'system:controller:cloud-provider', [
      rule(['create', 'get', 'list', 'watch'], [CORE], ['configmaps']),
    ]),
    role(SYSTEM_NAMESPACE, 'system:controller:token-cleaner', [
      rule(['delete', 'get', 'list', 'watch'], [CORE], ['secrets']),
      eventsRule(),
    ]),
    role(PUBLIC_NAMESPACE, 'system:controller:bootstrap-signer', [
      rule(READ, [CORE], ['configmaps']),
      rule(['update', 'patch'], [CORE], ['configmaps'], ['cluster-info']),
      eventsRule(),
    ]),
  ];
}

/** The default RoleBindings of the `system` and `public` namespaces. */
export function namespaceRoleBindings(): RoleBinding[] {
  return [
    roleBinding(
      SYSTEM_NAMESPACE,
      'system::extension-apiserver-authentication-reader',
      'extension-apiserver-authentication-reader',
      [principal('User', CONTROLLER_MANAGER_USER), principal('User', SCHEDULER_USER)],
    ),
    roleBinding(
      SYSTEM_NAMESPACE,
      'system::leader-locking-platform-controller-manager',
      'system::leader-locking-platform-controller-manager',
      [principal('User', CONTROLLER_MANAGER_USER), serviceAccount(SYSTEM_NAMESPACE, 'platform-controller-manager')],
    ),
    roleBinding(
      SYSTEM_NAMESPACE,
      'system::leader-locking-platform-scheduler',
      'system::leader-locking-platform-scheduler',
      [principal('User', SCHEDULER_USER), serviceAccount(SYSTEM_NAMESPACE, 'platform-scheduler')],
    ),
    roleBinding(SYSTEM_NAMESPACE, 'system:controller:bootstrap-signer', 'system:controller:bootstrap-signer', [
      serviceAccount(SYSTEM_NAMESPACE, 'bootstrap-signer'),
    ]),
    roleBinding(SYSTEM_NAMESPACE, 'system:controller:cloud-provider', 'system:controller:cloud-provider', [
      serviceAccount(SYSTEM_NAMESPACE, 'cloud-provider'),
    ]),
    roleBinding(SYSTEM_NAMESPACE, 'system:controller:token-cleaner', 'system:controller:token-cleaner', [
      serviceAccount(SYSTEM_NAMESPACE, 'token-cleaner'),
    ]),
    roleBinding(PUBLIC_NAMESPACE, 'system:controller:bootstrap-signer', 'system:controller:bootstrap-signer', [
      serviceAccount(SYSTEM_NAMESPACE, 'bootstrap-signer'),
    ]),
  ];
}
