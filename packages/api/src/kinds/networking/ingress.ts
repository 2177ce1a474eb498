/**
 * Ingress and IngressClass, as Kubernetes 1.21 serves them: networking.platform/v1 (preferred), networking.platform/
 * v1beta1 and, for Ingress only, extensions/v1beta1. The v1beta1 shapes differ from v1 only in the backend
 * (`serviceName` + `servicePort` instead of `service: {name, port: {name | number}}`) and in `spec.backend`
 * (v1: `spec.defaultBackend`); `convert.ts` maps one to the other. Every version is stored as v1.
 */
import { type Static, type TObject } from '@sinclair/typebox';

import { object, opt, ptr, ref, req, t, embed } from '../../schema/schema';
import { defineKind, type Kind, OBJECT_HEAD, schemaPrefix } from '../../scheme/kind';
import { AGE_COLUMN } from '../../table/table';
import { LoadBalancerStatusSchema, TypedLocalObjectReferenceSchema } from '../core/v1/types';

/** The networking API group. */
export const NETWORKING_GROUP = 'networking.platform';

/** The Ingress versions this server serves, as `group/version`. */
export type IngressVersion = 'networking.platform/v1' | 'networking.platform/v1beta1' | 'extensions/v1beta1';

function ingressSchemas(group: string, version: string) {
  const P = schemaPrefix(group, version);
  const isV1 = version === 'v1';
  const ServiceBackendPort = isV1
    ? object(`${P}ServiceBackendPort`, {
        name: opt(1, t.string(), 'Name of the port on the service; exclusive with number.'),
        number: opt(2, t.int32(), 'Numerical port number on the service; exclusive with name.'),
      })
    : undefined;
  const ServiceBackend = ServiceBackendPort
    ? object(`${P}IngressServiceBackend`, {
        name: req(1, t.string(), 'Name of the referenced service (in the same namespace as the Ingress).'),
        port: opt(2, ref(ServiceBackendPort), 'Port of the referenced service.'),
      })
    : undefined;
  const Backend = object(
    `${P}IngressBackend`,
    ServiceBackend
      ? {
          service: opt(4, ref(ServiceBackend), 'A service as the backend; exclusive with resource.'),
          resource: opt(3, ref(TypedLocalObjectReferenceSchema), 'Another resource as the backend.'),
        }
      : {
          serviceName: opt(1, t.string(), 'Name of the referenced service.'),
          servicePort: opt(2, t.intOrString(), 'Port of the referenced service.'),
          resource: opt(3, ref(TypedLocalObjectReferenceSchema), 'Another resource as the backend.'),
        },
    { description: 'IngressBackend describes all endpoints for a given service and port.' },
  );
  const Path = object(`${P}HTTPIngressPath`, {
    path: opt(1, t.string(), 'Path matched against the path of an incoming request.'),
    pathType: opt(3, ptr(t.string()), 'Exact, Prefix or ImplementationSpecific.'),
    backend: req(2, ref(Backend), 'Where the matching requests go.'),
  });
  const HTTPRuleValue = object(`${P}HTTPIngressRuleValue`, {
    paths: req(1, t.array(ref(Path), { listType: 'atomic' }), 'Paths mapped to backends.'),
  });
  const RuleValue = object(`${P}IngressRuleValue`, {
    http: opt(1, ref(HTTPRuleValue), 'HTTP rules.'),
  });
  const Rule = object(`${P}IngressRule`, {
    host: opt(1, t.string(), 'Fully qualified domain name of a network host (a wildcard is allowed in front).'),
    ...embed(2, 'ingressRuleValue', RuleValue),
  });
  const TLS = object(`${P}IngressTLS`, {
    hosts: opt(1, t.array(t.string(), { listType: 'atomic' }), 'Hosts included in the TLS certificate.'),
    secretName: opt(2, t.string(), 'Secret used to terminate TLS on port 443.'),
  });
  const Spec = object(`${P}IngressSpec`, {
    ingressClassName: opt(4, ptr(t.string()), 'Name of the IngressClass cluster resource.'),
    ...(isV1
      ? { defaultBackend: opt(1, ref(Backend), 'Backend of the requests no rule matches.') }
      : { backend: opt(1, ref(Backend), 'Backend of the requests no rule matches.') }),
    tls: opt(2, t.array(ref(TLS), { listType: 'atomic' }), 'TLS configuration.'),
    rules: opt(3, t.array(ref(Rule), { listType: 'atomic' }), 'Host rules.'),
  });
  const Status = object(`${P}IngressStatus`, {
    loadBalancer: opt(1, ref(LoadBalancerStatusSchema), 'Current state of the load-balancer.'),
  });
  return object(
    `${P}Ingress`,
    {
      ...OBJECT_HEAD,
      spec: opt(2, ref(Spec), 'Desired state of the Ingress.'),
      status: opt(3, ref(Status), 'Current state of the Ingress.'),
    },
    {
      description:
        'Ingress is a collection of rules that allow inbound connections to reach the endpoints defined by a backend.',
    },
  );
}

/** Ingress in networking.platform/v1. */
export const IngressSchema = ingressSchemas(NETWORKING_GROUP, 'v1');
/** Ingress in networking.platform/v1beta1. */
export const IngressV1beta1Schema = ingressSchemas(NETWORKING_GROUP, 'v1beta1');
/** Ingress in extensions/v1beta1 (the same shape as networking.platform/v1beta1). */
export const ExtensionsIngressSchema = ingressSchemas('extensions', 'v1beta1');
type TypedReference = Static<typeof TypedLocalObjectReferenceSchema>;

/** The spec fields both Ingress versions share, over the version's backend type. */
interface IngressSpecOf<B> {
  ingressClassName?: string;
  tls?: { hosts?: string[]; secretName?: string }[];
  rules?: { host?: string; http?: { paths: { path?: string; pathType?: string; backend: B }[] } }[];
}
/** A v1 Ingress backend. */
export interface IngressBackend {
  service?: { name: string; port?: { name?: string; number?: number } };
  resource?: TypedReference;
}
/** A v1beta1 Ingress backend. */
export interface IngressV1beta1Backend {
  serviceName?: string;
  servicePort?: number | string;
  resource?: TypedReference;
}
/** A networking.platform/v1 Ingress in its JSON form. */
export interface Ingress {
  apiVersion?: string;
  kind?: string;
  metadata?: Static<typeof IngressSchema>['metadata'];
  spec?: IngressSpecOf<IngressBackend> & { defaultBackend?: IngressBackend };
  status?: { loadBalancer?: Static<typeof LoadBalancerStatusSchema> };
}
/** A v1beta1 Ingress (networking.platform or extensions) in its JSON form. */
export interface IngressV1beta1 {
  apiVersion?: string;
  kind?: string;
  metadata?: Static<typeof IngressSchema>['metadata'];
  spec?: IngressSpecOf<IngressV1beta1Backend> & { backend?: IngressV1beta1Backend };
  status?: { loadBalancer?: Static<typeof LoadBalancerStatusSchema> };
}

/** `kubernetes.io/ingress.class`: the class annotation that predates `spec.ingressClassName`. */
export const INGRESS_CLASS_ANNOTATION = 'kubernetes.io/ingress.class';

/** The fields of an Ingress of any version that the printer reads. */
interface IngressView {
  spec?: { ingressClassName?: string; tls?: unknown[]; rules?: { host?: string }[] };
  status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } };
}

/** `formatHosts` of kubectl's printers: up to three hosts, `*` when no rule names one. */
function formatHosts(rules: { host?: string }[]): string {
  const list: string[] = [];
  const max = 3;
  let more = false;
  for (const rule of rules) {
    if (list.length === max) more = true;
    if (!more && rule.host) list.push(rule.host);
  }
  if (list.length === 0) return '*';
  let ret = list.join(',');
  if (more) ret += ` + ${rules.length - max} more...`;
  return ret;
}

/** `loadBalancerStatusStringer` (not wide): the addresses, cut to 16 characters. */
export function loadBalancerAddresses(ingress: { ip?: string; hostname?: string }[] | undefined): string {
  const set = new Set((ingress ?? []).map((i) => i.ip || i.hostname || '').filter(Boolean));
  const r = [...set].sort().join(',');
  return r.length > 16 ? `${r.slice(0, 13)}...` : r;
}

function ingressKind<S extends TObject>(group: string, version: string, schema: S, isV1: boolean): Kind<S> {
  const view = (o: Static<S>): IngressView => o as unknown as IngressView;
  return defineKind({
    group,
    version,
    kind: 'Ingress',
    plural: 'ingresses',
    shortNames: ['ing'],
    scope: 'Namespaced',
    subresources: { status: { verbs: ['get', 'patch', 'update'] } },
    schema,
    defaults(obj) {
      // v1beta1 (both groups) defaults a path's type to ImplementationSpecific; v1 requires it.
      if (isV1) return;
      const spec = (obj as unknown as IngressV1beta1).spec;
      for (const rule of spec?.rules ?? []) {
        for (const p of rule.http?.paths ?? []) p.pathType ??= 'ImplementationSpecific';
      }
    },
    columns: [
      {
        name: 'Class',
        type: 'string',
        description: 'The name of the IngressClass resource.',
        cell: (o) => view(o).spec?.ingressClassName ?? '<none>',
      },
      {
        name: 'Hosts',
        type: 'string',
        description: 'Hosts that incoming requests are matched against.',
        cell: (o) => formatHosts(view(o).spec?.rules ?? []),
      },
      {
        name: 'Address',
        type: 'string',
        description: 'Address is a list containing ingress points for the load-balancer.',
        cell: (o) => loadBalancerAddresses(view(o).status?.loadBalancer?.ingress),
      },
      {
        name: 'Ports',
        type: 'string',
        description: 'Ports of TLS configurations that open.',
        cell: (o) => ((view(o).spec?.tls?.length ?? 0) > 0 ? '80, 443' : '80'),
      },
      AGE_COLUMN,
    ],
  });
}

/** The Ingress kind in networking.platform/v1 (the preferred version; the stored one). */
export const IngressKind = ingressKind(NETWORKING_GROUP, 'v1', IngressSchema, true);
/** The Ingress kind in networking.platform/v1beta1. */
export const IngressV1beta1Kind = ingressKind(NETWORKING_GROUP, 'v1beta1', IngressV1beta1Schema, false);
/** The Ingress kind in extensions/v1beta1, the only resource 1.21 still serves there. */
export const ExtensionsIngressKind = ingressKind('extensions', 'v1beta1', ExtensionsIngressSchema, false);

function ingressClassSchema(version: string) {
  const P = schemaPrefix(NETWORKING_GROUP, version);
  const Params = object(`${P}IngressClassParametersReference`, {
    apiGroup: opt(1, ptr(t.string()), 'Group of the referenced resource; core when empty.'),
    kind: req(2, t.string(), 'Kind of the referenced resource.'),
    name: req(3, t.string(), 'Name of the referenced resource.'),
    scope: opt(4, ptr(t.string()), 'Cluster or Namespace (IngressClassNamespacedParams).'),
    namespace: opt(5, ptr(t.string()), 'Namespace of the referenced resource when its scope is Namespace.'),
  });
  const Spec = object(`${P}IngressClassSpec`, {
    controller: opt(1, t.string(), 'Name of the controller that should handle this class (a domain-prefixed path).'),
    parameters: opt(2, ref(Params), 'Additional configuration for the controller.'),
  });
  return object(
    `${P}IngressClass`,
    { ...OBJECT_HEAD, spec: opt(2, ref(Spec), 'Configuration of the IngressClass.') },
    { description: 'IngressClass represents the class of the Ingress, referenced by the Ingress Spec.' },
  );
}

/** IngressClass in networking.platform/v1. */
export const IngressClassSchema = ingressClassSchema('v1');
/** IngressClass in networking.platform/v1beta1 (the same shape). */
export const IngressClassV1beta1Schema = ingressClassSchema('v1beta1');
/** An IngressClass object in its JSON form. */
export type IngressClass = Static<typeof IngressClassSchema>;

/** `ingressclass.kubernetes.io/is-default-class`: marks the class of Ingresses that name none. */
export const INGRESS_CLASS_DEFAULT_ANNOTATION = 'ingressclass.kubernetes.io/is-default-class';

function ingressClassKind<S extends TObject>(version: string, schema: S): Kind<S> {
  const view = (o: Static<S>): IngressClass => o as unknown as IngressClass;
  return defineKind({
    group: NETWORKING_GROUP,
    version,
    kind: 'IngressClass',
    plural: 'ingressclasses',
    scope: 'Cluster',
    schema,
    columns: [
      {
        name: 'Controller',
        type: 'string',
        description: 'Controller that is responsible for handling this class.',
        cell: (o) => view(o).spec?.controller ?? '',
      },
      {
        name: 'Parameters',
        type: 'string',
        description: 'A reference to a resource with additional parameters.',
        cell: (o) => {
          const p = view(o).spec?.parameters;
          if (!p) return '<none>';
          return `${p.kind}${p.apiGroup !== undefined ? `.${p.apiGroup}` : ''}/${p.name}`;
        },
      },
      AGE_COLUMN,
    ],
  });
}

/** The IngressClass kind in networking.platform/v1. */
export const IngressClassKind = ingressClassKind('v1', IngressClassSchema);
/** The IngressClass kind in networking.platform/v1beta1. */
export const IngressClassV1beta1Kind = ingressClassKind('v1beta1', IngressClassV1beta1Schema);
