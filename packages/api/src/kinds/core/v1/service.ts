/** core/v1 Service: a stable address for a set of pods. */
import { type Static } from '@sinclair/typebox';

import { object, opt, ptr, ref, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';
import { ConditionSchema } from '../../meta-condition';
import { formatLabels } from '../../printing';
import { LoadBalancerStatusSchema, ServicePortSchema, SessionAffinityConfigSchema } from './types';

const P = schemaPrefix('', 'v1');

/** ServiceSpec, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ServiceSpecSchema = object(`${P}ServiceSpec`, {
  ports: opt(
    1,
    t.array(ref(ServicePortSchema), {
      patchMergeKey: 'port',
      patchStrategy: 'merge',
      listType: 'map',
      listMapKeys: ['port', 'protocol'],
    }),
    'The ports exposed by this service.',
  ),
  selector: opt(2, t.map(t.string()), 'Routes traffic to pods with these labels.'),
  clusterIP: opt(3, t.string(), 'IP address of the service; "None" for a headless service.'),
  clusterIPs: opt(18, t.array(t.string()), 'IP addresses of the service (dual stack).'),
  type: opt(
    4,
    t.enumOf(['ExternalName', 'ClusterIP', 'NodePort', 'LoadBalancer']),
    'How the service is exposed. Defaults to ClusterIP.',
  ),
  externalIPs: opt(5, t.array(t.string()), 'IP addresses for which nodes also accept traffic for this service.'),
  sessionAffinity: opt(7, t.enumOf(['ClientIP', 'None']), 'ClientIP or None (default).'),
  loadBalancerIP: opt(8, t.string()),
  loadBalancerSourceRanges: opt(9, t.array(t.string())),
  externalName: opt(10, t.string(), 'DNS name this service aliases (type ExternalName).'),
  externalTrafficPolicy: opt(11, t.enumOf(['Local', 'Cluster'])),
  healthCheckNodePort: opt(12, t.int32()),
  publishNotReadyAddresses: opt(13, t.bool()),
  sessionAffinityConfig: opt(14, ref(SessionAffinityConfigSchema)),
  topologyKeys: opt(16, t.array(t.string()), 'Deprecated topology-aware routing preferences.'),
  ipFamilies: opt(19, t.array(t.enumOf(['IPv4', 'IPv6']))),
  ipFamilyPolicy: opt(17, ptr(t.enumOf(['SingleStack', 'PreferDualStack', 'RequireDualStack']))),
  allocateLoadBalancerNodePorts: opt(20, ptr(t.bool())),
  loadBalancerClass: opt(21, ptr(t.string())),
  internalTrafficPolicy: opt(22, ptr(t.enumOf(['Local', 'Cluster']))),
});
/** A ServiceSpec object in its JSON form. */
export type ServiceSpec = Static<typeof ServiceSpecSchema>;

/** ServiceStatus, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ServiceStatusSchema = object(`${P}ServiceStatus`, {
  loadBalancer: opt(1, ref(LoadBalancerStatusSchema), 'Status of the load balancer, if any.'),
  conditions: opt(
    2,
    t.array(ref(ConditionSchema), { patchMergeKey: 'type', patchStrategy: 'merge' }),
    'Current service state.',
  ),
});

/** Service, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ServiceSchema = object(
  `${P}Service`,
  {
    ...OBJECT_HEAD,
    spec: opt(2, ref(ServiceSpecSchema), 'Behavior of the service.'),
    status: opt(3, ref(ServiceStatusSchema), 'Most recently observed status of the service. Read-only.'),
  },
  {
    description:
      'Service is a named abstraction of software service consisting of local port that the proxy listens on, and the selector that determines which pods will answer requests sent through the proxy.',
  },
);
/** A Service object in its JSON form. */
export type Service = Static<typeof ServiceSchema>;

/** The External-IP column of `kubectl get services` (`getServiceExternalIP`). */
export function serviceExternalIP(svc: Service, wide: boolean): string {
  const spec = svc.spec ?? {};
  const external = spec.externalIPs ?? [];
  switch (spec.type ?? 'ClusterIP') {
    case 'ClusterIP':
    case 'NodePort':
      return external.length ? external.join(',') : '<none>';
    case 'LoadBalancer': {
      const ingress = (svc.status?.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname || '').filter(Boolean);
      let lb = ingress.join(',');
      if (!wide && lb.length > 16) lb = `${lb.slice(0, 13)}...`;
      const all = [...(lb ? [lb] : []), ...external];
      return all.length ? all.join(',') : '<pending>';
    }
    case 'ExternalName':
      return spec.externalName ?? '';
  }
  return '<unknown>';
}

/** The Port(s) column: `80/TCP`, `80:30080/TCP`, comma-separated, `<none>` without ports (`makePortString`). */
export function servicePorts(svc: Service): string {
  const ports = svc.spec?.ports ?? [];
  if (ports.length === 0) return '<none>';
  return ports
    .map((p) => (p.nodePort ? `${p.port}:${p.nodePort}/${p.protocol ?? 'TCP'}` : `${p.port}/${p.protocol ?? 'TCP'}`))
    .join(',');
}

/** The Service kind: discovery facts, defaults, printer columns and field selectors. */
export const ServiceKind = defineKind({
  group: '',
  version: 'v1',
  kind: 'Service',
  plural: 'services',
  shortNames: ['svc'],
  categories: ['all'],
  scope: 'Namespaced',
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: { status: { verbs: ['get', 'patch', 'update'] } },
  schema: ServiceSchema,
  defaults(svc) {
    const spec = (svc.spec ??= {});
    spec.sessionAffinity ||= 'None';
    if (spec.sessionAffinity === 'ClientIP') {
      const config = (spec.sessionAffinityConfig ??= {});
      const clientIP = (config.clientIP ??= {});
      clientIP.timeoutSeconds ??= 10800;
    }
    spec.type ||= 'ClusterIP';
    for (const port of spec.ports ?? []) {
      port.protocol ||= 'TCP';
      if (port.targetPort === undefined || port.targetPort === 0 || port.targetPort === '') port.targetPort = port.port;
    }
    if ((spec.type === 'NodePort' || spec.type === 'LoadBalancer') && !spec.externalTrafficPolicy) {
      spec.externalTrafficPolicy = 'Cluster';
    }
  },
  columns: [
    { name: 'Type', type: 'string', description: 'The type of the service.', cell: (o) => o.spec?.type ?? '' },
    {
      name: 'Cluster-IP',
      type: 'string',
      description: 'The IP address of the service.',
      cell: (o) => o.spec?.clusterIP || '<none>',
    },
    {
      name: 'External-IP',
      type: 'string',
      description: 'External addresses of the service.',
      cell: (o) => serviceExternalIP(o, false),
    },
    { name: 'Port(s)', type: 'string', description: 'The ports of the service.', cell: (o) => servicePorts(o) },
    AGE_COLUMN,
    {
      name: 'Selector',
      type: 'string',
      priority: 1,
      description: 'Routes traffic to pods with these labels.',
      cell: (o) => formatLabels(o.spec?.selector),
    },
  ],
});
