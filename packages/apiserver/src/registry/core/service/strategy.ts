/**
 * The Service strategy (model: Kubernetes 1.21 `pkg/registry/core/service/strategy.go`, `ValidateService`,
 * `ValidateServiceUpdate`): type, ports, selector, cluster IPs, external names and traffic policies.
 *
 * Cluster IPs, IP families and node ports are allocated and defaulted by the Service store (storage.ts,
 * ip-families.ts); this strategy checks their shape. Status is written through `services/status` only.
 */
import {
  type FieldError,
  FieldPath,
  field,
  isDNS1123Label,
  isDNS1123Subdomain,
  isValidIP,
  isValidPortName,
  isValidPortNum,
  type Kind,
  type Service,
  validateLabels,
} from '@platform/api';

import { defaultStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';
import { ipFamilyOf } from './allocator';

/** The service types. */
export const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const MAX_CLIENT_IP_TIMEOUT = 86400;

function isHeadless(s: Service): boolean {
  return s.spec?.clusterIP === 'None';
}

/** Validation of a Service. */
export function validateService(s: Service): FieldError[] {
  const errs: FieldError[] = [];
  const spec = s.spec ?? {};
  const path = new FieldPath('spec');
  const type = spec.type ?? 'ClusterIP';
  if (!SERVICE_TYPES.includes(type)) errs.push(field.notSupported(path.child('type'), type, SERVICE_TYPES));
  const ports = spec.ports ?? [];
  if (type === 'ExternalName') {
    if (spec.clusterIP) errs.push(field.forbidden(path.child('clusterIP'), 'may not be set for ExternalName services'));
    const name = (spec.externalName ?? '').replace(/\.$/, '');
    if (!name) errs.push(field.required(path.child('externalName'), ''));
    else errs.push(...field.invalidEach(path.child('externalName'), spec.externalName, isDNS1123Subdomain(name)));
  } else if (ports.length === 0 && !isHeadless(s)) {
    errs.push(field.required(path.child('ports'), ''));
  }
  const names = new Set<string>();
  const keys = new Set<string>();
  ports.forEach((p, i) => {
    const pp = path.child('ports').index(i);
    if (ports.length > 1 && !p.name) errs.push(field.required(pp.child('name'), ''));
    if (p.name) {
      errs.push(...field.invalidEach(pp.child('name'), p.name, isDNS1123Label(p.name)));
      if (names.has(p.name)) errs.push(field.duplicate(pp.child('name'), p.name));
      names.add(p.name);
    }
    errs.push(...field.invalidEach(pp.child('port'), p.port, isValidPortNum(p.port)));
    const protocol = p.protocol ?? '';
    if (!protocol) errs.push(field.required(pp.child('protocol'), ''));
    else if (!PROTOCOLS.includes(protocol)) errs.push(field.notSupported(pp.child('protocol'), protocol, PROTOCOLS));
    const target = p.targetPort;
    if (typeof target === 'number')
      errs.push(...field.invalidEach(pp.child('targetPort'), target, isValidPortNum(target)));
    else if (typeof target === 'string')
      errs.push(...field.invalidEach(pp.child('targetPort'), target, isValidPortName(target)));
    if (p.nodePort) {
      if (type === 'ClusterIP' || type === 'ExternalName') {
        errs.push(field.forbidden(pp.child('nodePort'), `may not be used when \`type\` is '${type}'`));
      } else errs.push(...field.invalidEach(pp.child('nodePort'), p.nodePort, isValidPortNum(p.nodePort)));
    }
    const key = `${p.port}/${protocol}`;
    if (keys.has(key)) errs.push(field.duplicate(pp, key));
    keys.add(key);
  });
  errs.push(...validateLabels(spec.selector, path.child('selector')));
  if (spec.clusterIP && spec.clusterIP !== 'None' && isValidIP(spec.clusterIP).length) {
    errs.push(field.invalid(path.child('clusterIP'), spec.clusterIP, "must be empty, 'None', or a valid IP address"));
  }
  (spec.clusterIPs ?? []).forEach((ip, i) => {
    if (ip !== 'None' && isValidIP(ip).length)
      errs.push(field.invalid(path.child('clusterIPs').index(i), ip, "must be empty, 'None', or a valid IP address"));
  });
  if (spec.clusterIP && spec.clusterIPs?.length && spec.clusterIPs[0] !== spec.clusterIP) {
    errs.push(field.invalid(path.child('clusterIPs').index(0), spec.clusterIPs[0], 'must be equal to clusterIP'));
  }
  const ips = spec.clusterIPs ?? [];
  if (ips.length > 2) {
    errs.push(field.invalid(path.child('clusterIPs'), ips, 'may only hold up to 2 values'));
  } else if (ips.length === 2) {
    if (ips.includes('None')) {
      errs.push(
        field.invalid(path.child('clusterIPs'), ips, "must not have more than one value when the first is 'None'"),
      );
    } else if (ipFamilyOf(ips[0] as string) && ipFamilyOf(ips[0] as string) === ipFamilyOf(ips[1] as string)) {
      errs.push(field.invalid(path.child('clusterIPs'), ips, 'may specify no more than one IP for each IP family'));
    }
  }
  (spec.externalIPs ?? []).forEach((ip, i) => {
    errs.push(...field.invalidEach(path.child('externalIPs').index(i), ip, isValidIP(ip)));
  });
  const affinity = spec.sessionAffinity ?? 'None';
  if (affinity === 'ClientIP') {
    const timeout = spec.sessionAffinityConfig?.clientIP?.timeoutSeconds;
    if (timeout !== undefined && timeout !== null && (timeout <= 0 || timeout > MAX_CLIENT_IP_TIMEOUT)) {
      errs.push(
        field.invalid(
          path.child('sessionAffinityConfig', 'clientIP', 'timeoutSeconds'),
          timeout,
          `must be greater than 0 and less than ${MAX_CLIENT_IP_TIMEOUT}`,
        ),
      );
    }
  } else if (affinity !== 'None') {
    errs.push(field.notSupported(path.child('sessionAffinity'), affinity, ['ClientIP', 'None']));
  } else if (spec.sessionAffinityConfig) {
    errs.push(
      field.invalid(
        path.child('sessionAffinityConfig'),
        spec.sessionAffinityConfig,
        'must not be set when session affinity is None',
      ),
    );
  }
  if (spec.externalTrafficPolicy && type !== 'NodePort' && type !== 'LoadBalancer') {
    errs.push(
      field.invalid(
        path.child('externalTrafficPolicy'),
        spec.externalTrafficPolicy,
        'ExternalTrafficPolicy can only be set on NodePort and LoadBalancer service',
      ),
    );
  }
  if (spec.healthCheckNodePort && !(type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local')) {
    errs.push(
      field.invalid(
        path.child('healthCheckNodePort'),
        spec.healthCheckNodePort,
        'HealthCheckNodePort can only be set on LoadBalancer service with ExternalTrafficPolicy=Local',
      ),
    );
  }
  return errs;
}

/** Validation of a Service update: the new object is valid, and an allocated cluster IP does not change. */
export function validateServiceUpdate(s: Service, old: Service): FieldError[] {
  const errs = validateService(s);
  const wasExternal = (old.spec?.type ?? 'ClusterIP') === 'ExternalName';
  const isExternal = (s.spec?.type ?? 'ClusterIP') === 'ExternalName';
  const oldIP = old.spec?.clusterIP ?? '';
  if (!wasExternal && !isExternal && oldIP && (s.spec?.clusterIP ?? '') !== oldIP) {
    errs.push(field.invalid(new FieldPath('spec', 'clusterIP'), s.spec?.clusterIP ?? '', 'field is immutable'));
  }
  return errs;
}

/** The strategy of `services`. */
export function serviceStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    prepareForCreate: (_ctx, obj) => {
      const s = obj as Service;
      // Kubernetes 1.21 fills clusterIPs from clusterIP (dual-stack field) when only the latter is given.
      if (s.spec?.clusterIP && !s.spec.clusterIPs?.length) s.spec.clusterIPs = [s.spec.clusterIP];
    },
    prepareForUpdate: (_ctx, obj, old) => {
      const s = obj as Service;
      const o = old as Service;
      // An update that leaves clusterIP out keeps the one the service has (as kubectl apply expects).
      if (s.spec && !s.spec.clusterIP && o.spec?.clusterIP && s.spec.type !== 'ExternalName') {
        s.spec.clusterIP = o.spec.clusterIP;
        if (!s.spec.clusterIPs?.length && o.spec.clusterIPs) s.spec.clusterIPs = [...o.spec.clusterIPs];
      }
    },
    validate: (_ctx, obj) => validateService(obj as Service),
    validateUpdate: (_ctx, obj, old) => validateServiceUpdate(obj as Service, old as Service),
  });
}
