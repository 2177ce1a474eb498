/**
 * Conversions between the Ingress versions (model: Kubernetes 1.21 `pkg/apis/networking/v1beta1/conversion.go`):
 * v1beta1 `serviceName` + `servicePort` is v1 `service.name` + `service.port.number` (an integer port) or
 * `service.port.name` (a named one), and v1beta1 `spec.backend` is v1 `spec.defaultBackend`. Both functions return
 * new objects and never fail; the apiVersion is the target version's.
 */
import {
  type Ingress,
  type IngressBackend as V1Backend,
  type IngressV1beta1,
  type IngressV1beta1Backend as V1beta1Backend,
} from './ingress';

function backendToV1(b: V1beta1Backend): V1Backend {
  const out: V1Backend = {};
  if (b.resource) out.resource = b.resource;
  if (b.serviceName !== undefined || b.servicePort !== undefined) {
    const port = b.servicePort;
    out.service = {
      name: b.serviceName ?? '',
      ...(port === undefined ? {} : { port: typeof port === 'number' ? { number: port } : { name: port } }),
    };
  }
  return out;
}

function backendToV1beta1(b: V1Backend): V1beta1Backend {
  const out: V1beta1Backend = {};
  if (b.service) {
    out.serviceName = b.service.name;
    const port = b.service.port;
    if (port?.name) out.servicePort = port.name;
    else if (port?.number !== undefined) out.servicePort = port.number;
    else out.servicePort = 0;
  }
  if (b.resource) out.resource = b.resource;
  return out;
}

type Rules<B> = { host?: string; http?: { paths: { path?: string; pathType?: string; backend: B }[] } }[];

/** The rules with every path's backend mapped. */
function mapRules<A, B>(rules: Rules<A>, f: (b: A) => B): Rules<B> {
  return rules.map(({ http, ...r }) => ({
    ...r,
    ...(http ? { http: { paths: http.paths.map((p) => ({ ...p, backend: f(p.backend) })) } } : {}),
  }));
}

/** A v1beta1 Ingress (either group) as networking.platform/v1. */
export function ingressToV1(obj: IngressV1beta1): Ingress {
  const { spec, ...rest } = structuredClone(obj);
  const out: Ingress = { ...rest, apiVersion: 'networking.platform/v1', kind: 'Ingress' };
  if (spec) {
    const { backend, rules, ...specRest } = spec;
    out.spec = {
      ...specRest,
      ...(backend ? { defaultBackend: backendToV1(backend) } : {}),
      ...(rules ? { rules: mapRules(rules, backendToV1) } : {}),
    };
  }
  return out;
}

/** A networking.platform/v1 Ingress in a v1beta1 version (`networking.platform/v1beta1` or `extensions/v1beta1`). */
export function ingressToV1beta1(obj: Ingress, apiVersion: string): IngressV1beta1 {
  const { spec, ...rest } = structuredClone(obj);
  const out: IngressV1beta1 = { ...rest, apiVersion, kind: 'Ingress' };
  if (spec) {
    const { defaultBackend, rules, ...specRest } = spec;
    out.spec = {
      ...specRest,
      ...(defaultBackend ? { backend: backendToV1beta1(defaultBackend) } : {}),
      ...(rules ? { rules: mapRules(rules, backendToV1beta1) } : {}),
    };
  }
  return out;
}
