/**
 * The metrics server of `platform up` in the cluster's API: what metrics-server 0.5's deployment manifest
 * (`components.yaml`) creates, for a process on this machine instead of a pod — its roles and bindings (read nodes,
 * their metrics and pods; delegate authentication and authorization; read the `extension-apiserver-authentication`
 * ConfigMap), the Service `metrics-server` in `system` without a selector and its Endpoints pointing at the
 * process's port on 127.0.0.1 (the API server routes to endpoints, `--enable-aggregator-routing`), and the APIService
 * `v1beta1.metrics.platform` that makes the aggregation layer proxy the group to it, trusting the cluster CA.
 */
import { isIP } from 'node:net';

import { requestJson } from './http';
import { METRICS_SERVER_USER } from './pki';

/** Where the Service and Endpoints live. */
export const METRICS_SERVER_NAMESPACE = 'system';
export const METRICS_SERVER_SERVICE = 'metrics-server';

const RBAC = 'rbac.authorization.platform';
const USER = { apiGroup: RBAC, kind: 'User', name: METRICS_SERVER_USER };

/** One object and the collection it is created in. */
interface Registered {
  collection: string;
  object: { metadata: { name: string; namespace?: string; labels?: Record<string, string> } } & Record<string, unknown>;
}

function clusterRole(name: string, rules: unknown[], labels?: Record<string, string>): Registered {
  return {
    collection: `/apis/${RBAC}/v1/clusterroles`,
    object: { apiVersion: `${RBAC}/v1`, kind: 'ClusterRole', metadata: { name, ...(labels ? { labels } : {}) }, rules },
  };
}

function clusterRoleBinding(name: string, role: string): Registered {
  return {
    collection: `/apis/${RBAC}/v1/clusterrolebindings`,
    object: {
      apiVersion: `${RBAC}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: role },
      subjects: [USER],
    },
  };
}

/**
 * The objects that register a metrics server listening on `address`:`port` with a certificate of `caPem`; the
 * APIService is the last (register it once the server answers). At an IP address (`platform up`: 127.0.0.1) the
 * Service has no selector and Endpoints at that address, which the API servers dial with
 * `--enable-aggregator-routing`; at a DNS name (docker compose's `metrics-server`, a machine's name under systemd) the
 * Service is an ExternalName, which the aggregation layer dials by that name either way.
 */
export function metricsServerObjects(port: number, caPem: string, address = '127.0.0.1'): Registered[] {
  const ns = METRICS_SERVER_NAMESPACE;
  const byName = !isIP(address);
  const labels = { 'k8s-app': 'metrics-server' };
  return [
    clusterRole(
      'system:aggregated-metrics-reader',
      [{ apiGroups: ['metrics.platform'], resources: ['pods', 'nodes'], verbs: ['get', 'list', 'watch'] }],
      {
        [`${RBAC}/aggregate-to-admin`]: 'true',
        [`${RBAC}/aggregate-to-edit`]: 'true',
        [`${RBAC}/aggregate-to-view`]: 'true',
      },
    ),
    clusterRole('system:metrics-server', [
      { apiGroups: [''], resources: ['nodes', 'nodes/metrics', 'pods'], verbs: ['get', 'list', 'watch'] },
    ]),
    clusterRoleBinding('system:metrics-server', 'system:metrics-server'),
    clusterRoleBinding('metrics-server:system:auth-delegator', 'system:auth-delegator'),
    {
      collection: `/apis/${RBAC}/v1/namespaces/${ns}/rolebindings`,
      object: {
        apiVersion: `${RBAC}/v1`,
        kind: 'RoleBinding',
        metadata: { name: 'metrics-server-auth-reader', namespace: ns },
        roleRef: { apiGroup: RBAC, kind: 'Role', name: 'extension-apiserver-authentication-reader' },
        subjects: [USER],
      },
    },
    {
      collection: `/api/v1/namespaces/${ns}/services`,
      object: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: METRICS_SERVER_SERVICE, namespace: ns, labels },
        spec: byName
          ? { type: 'ExternalName', externalName: address, ports: [{ name: 'https', port, protocol: 'TCP' }] }
          : { ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: port }] },
      },
    },
    ...(byName
      ? []
      : [
          {
            collection: `/api/v1/namespaces/${ns}/endpoints`,
            object: {
              apiVersion: 'v1',
              kind: 'Endpoints',
              metadata: { name: METRICS_SERVER_SERVICE, namespace: ns, labels },
              subsets: [{ addresses: [{ ip: address }], ports: [{ name: 'https', port, protocol: 'TCP' }] }],
            },
          },
        ]),
    {
      collection: '/apis/apiregistration.platform/v1/apiservices',
      object: {
        apiVersion: 'apiregistration.platform/v1',
        kind: 'APIService',
        metadata: { name: 'v1beta1.metrics.platform', labels },
        spec: {
          service: { name: METRICS_SERVER_SERVICE, namespace: ns, port: byName ? port : 443 },
          group: 'metrics.platform',
          version: 'v1beta1',
          caBundle: Buffer.from(caPem).toString('base64'),
          groupPriorityMinimum: 100,
          versionPriority: 100,
        },
      },
    },
  ];
}

/**
 * Creates each object, or replaces what a previous start left (the Endpoints name this start's port), as the admin
 * (`token`, trusting `ca`) of the API server at `server`. Throws naming the object that could not be written.
 */
export async function registerMetricsServer(
  server: string,
  token: string,
  ca: string,
  objects: readonly Registered[],
): Promise<void> {
  for (const { collection, object } of objects) {
    const what = `${String(object.kind)} ${object.metadata.namespace ? `${object.metadata.namespace}/` : ''}${object.metadata.name}`;
    const created = await requestJson(`${server}${collection}`, { method: 'POST', token, ca, body: object });
    if (created.status === 201 || created.status === 200) continue;
    if (created.status !== 409)
      throw new RegistrationError(
        created.status,
        `creating ${what} answered ${created.status}: ${messageOf(created.body)}`,
      );
    const url = `${server}${collection}/${encodeURIComponent(object.metadata.name)}`;
    // Replaced at the version just read; a writer in between (the availability controller's status) means again.
    for (let attempt = 1; ; attempt++) {
      const current = await requestJson(url, { token, ca });
      const got = current.body as { metadata?: { resourceVersion?: string }; spec?: { clusterIP?: string } };
      const body: Record<string, unknown> = {
        ...object,
        metadata: { ...object.metadata, resourceVersion: got?.metadata?.resourceVersion },
      };
      // A Service keeps its cluster IP: a replacement without it would ask to change an immutable field (an
      // ExternalName Service has none).
      const externalName = (object.spec as { type?: string } | undefined)?.type === 'ExternalName';
      if (object.kind === 'Service' && got?.spec?.clusterIP && !externalName)
        body.spec = { ...(object.spec as object), clusterIP: got.spec.clusterIP };
      const replaced = await requestJson(url, { method: 'PUT', token, ca, body });
      if (replaced.status === 200) break;
      if (replaced.status !== 409 || attempt >= 5)
        throw new RegistrationError(
          replaced.status,
          `replacing ${what} answered ${replaced.status}: ${messageOf(replaced.body)}`,
        );
    }
  }
}

/** The API server refused an object: `status` is its answer's (a 4xx other than 429 will not change by retrying). */
export class RegistrationError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function messageOf(body: unknown): string {
  return (body as { message?: string } | undefined)?.message ?? 'no message';
}
