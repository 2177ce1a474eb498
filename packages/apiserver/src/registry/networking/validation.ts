/**
 * Validation of the networking.platform kinds (model: Kubernetes 1.21 `pkg/apis/networking/validation`): Ingress
 * (rules, paths, backends, TLS hosts, class), IngressClass (controller, parameters) and NetworkPolicy (selectors,
 * ports, peers, IP blocks, policy types), with 1.21's messages. Ingresses of a v1beta1 version are validated in
 * their v1 form, as Kubernetes validates the internal (v1-shaped) type, so their errors name v1's fields.
 */
import {
  type FieldError,
  FieldPath,
  field,
  type Ingress,
  type IngressBackend,
  INGRESS_CLASS_ANNOTATION,
  type IngressClass,
  isDNS1035Label,
  isDNS1123Subdomain,
  isDomainPrefixedPath,
  isValidIP,
  isValidPortName,
  isValidPortNum,
  isWildcardDNS1123Subdomain,
  type NetworkPolicy,
  parseIP,
  validateImmutableField,
  validateLabelSelector,
} from '@platform/api';

/** The path types of an HTTP path. */
export const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];
const INVALID_PATH_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F'];
const INVALID_PATH_SUFFIXES = ['/..', '/.'];
/** The longest controller name of an IngressClass. */
export const MAX_INGRESS_CLASS_CONTROLLER_LENGTH = 250;

function validateHost(host: string, path: FieldPath): FieldError[] {
  const msgs = host.includes('*') ? isWildcardDNS1123Subdomain(host) : isDNS1123Subdomain(host);
  const errs = field.invalidEach(path, host, msgs);
  if (isValidIP(host).length === 0) errs.push(field.invalid(path, host, 'must be a DNS name, not an IP address'));
  return errs;
}

function validateBackend(b: IngressBackend, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (b.resource && b.service) return [field.invalid(path, '', 'cannot set both resource and service backends')];
  if (b.resource) {
    const r = b.resource;
    if (!r.kind) errs.push(field.required(path.child('resource', 'kind'), ''));
    if (!r.name) errs.push(field.required(path.child('resource', 'name'), ''));
    if (r.apiGroup)
      errs.push(...field.invalidEach(path.child('resource', 'apiGroup'), r.apiGroup, isDNS1123Subdomain(r.apiGroup)));
    return errs;
  }
  if (!b.service) return [field.invalid(path, '', 'resource or service backend is required')];
  const s = b.service;
  if (!s.name) errs.push(field.required(path.child('service', 'name'), ''));
  else errs.push(...field.invalidEach(path.child('service', 'name'), s.name, isDNS1035Label(s.name)));
  const port = s.port;
  const portPath = path.child('service', 'port');
  if (port?.name && port.number) errs.push(field.invalid(portPath, '', 'cannot set both port name & port number'));
  else if (port?.name) errs.push(...field.invalidEach(portPath.child('name'), port.name, isValidPortName(port.name)));
  else if (port?.number !== undefined && port.number !== 0)
    errs.push(...field.invalidEach(portPath.child('number'), port.number, isValidPortNum(port.number)));
  else errs.push(field.required(portPath, 'port name or number is required'));
  return errs;
}

function validatePath(p: { path?: string; pathType?: string; backend: IngressBackend }, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const value = p.path ?? '';
  if (p.pathType === undefined) {
    errs.push(field.required(path.child('pathType'), 'pathType must be specified'));
  } else if (p.pathType === 'Exact' || p.pathType === 'Prefix') {
    if (!value.startsWith('/')) errs.push(field.invalid(path.child('path'), value, 'must be an absolute path'));
    for (const seq of INVALID_PATH_SEQUENCES) {
      if (value.includes(seq)) errs.push(field.invalid(path.child('path'), value, `must not contain '${seq}'`));
    }
    for (const suffix of INVALID_PATH_SUFFIXES) {
      if (value.endsWith(suffix)) errs.push(field.invalid(path.child('path'), value, `cannot end with '${suffix}'`));
    }
  } else if (p.pathType === 'ImplementationSpecific') {
    if (value.length > 0 && !value.startsWith('/'))
      errs.push(field.invalid(path.child('path'), value, 'must be an absolute path'));
  } else {
    errs.push(field.notSupported(path.child('pathType'), p.pathType, PATH_TYPES));
  }
  errs.push(...validateBackend(p.backend, path.child('backend')));
  return errs;
}

/** Validation of a networking.platform/v1 Ingress (`ValidateIngressCreate`'s spec and metadata rules). */
export function validateIngress(ing: Ingress): FieldError[] {
  const errs: FieldError[] = [];
  const spec = ing.spec ?? {};
  const specPath = new FieldPath('spec');
  const rules = spec.rules ?? [];
  if (rules.length === 0 && !spec.defaultBackend) {
    errs.push(
      field.invalid(
        specPath.child('rules'),
        spec.rules ?? null,
        'either `defaultBackend` or `rules` must be specified',
      ),
    );
  }
  if (spec.defaultBackend) errs.push(...validateBackend(spec.defaultBackend, specPath.child('defaultBackend')));
  rules.forEach((rule, i) => {
    const p = specPath.child('rules').index(i);
    if (rule.host) errs.push(...validateHost(rule.host, p.child('host')));
    if (rule.http) {
      const paths = rule.http.paths ?? [];
      if (paths.length === 0) errs.push(field.required(p.child('http', 'paths'), ''));
      paths.forEach((hp, j) => errs.push(...validatePath(hp, p.child('http', 'paths').index(j))));
    }
  });
  (spec.tls ?? []).forEach((tls, i) => {
    (tls.hosts ?? []).forEach((host, j) => {
      const p = specPath.child('tls').index(i).child('hosts').index(j);
      const msgs = host.includes('*') ? isWildcardDNS1123Subdomain(host) : isDNS1123Subdomain(host);
      errs.push(...field.invalidEach(p, host, msgs));
    });
  });
  if (spec.ingressClassName !== undefined) {
    const p = specPath.child('ingressClassName');
    errs.push(...field.invalidEach(p, spec.ingressClassName, isDNS1123Subdomain(spec.ingressClassName)));
  }
  return errs;
}

/** A new Ingress may not set both the class annotation and `spec.ingressClassName` (`ValidateIngressCreate`). */
export function validateIngressCreate(ing: Ingress): FieldError[] {
  const errs = validateIngress(ing);
  const annotation = ing.metadata?.annotations?.[INGRESS_CLASS_ANNOTATION];
  if (annotation !== undefined && ing.spec?.ingressClassName !== undefined) {
    errs.push(
      field.invalid(
        new FieldPath('annotations').child(INGRESS_CLASS_ANNOTATION),
        annotation,
        'can not be set when the class field is also set',
      ),
    );
  }
  return errs;
}

/** Validation of an IngressClass (`ValidateIngressClass`). */
export function validateIngressClass(ic: IngressClass): FieldError[] {
  const errs: FieldError[] = [];
  const specPath = new FieldPath('spec');
  const controller = ic.spec?.controller ?? '';
  if (controller.length > MAX_INGRESS_CLASS_CONTROLLER_LENGTH)
    errs.push(field.tooLong(specPath.child('controller'), controller, MAX_INGRESS_CLASS_CONTROLLER_LENGTH));
  errs.push(...isDomainPrefixedPath(specPath.child('controller'), controller));
  const params = ic.spec?.parameters;
  if (params) {
    const p = specPath.child('parameters');
    if (!params.kind) errs.push(field.required(p.child('kind'), 'kind is required'));
    if (!params.name) errs.push(field.required(p.child('name'), 'name is required'));
    if (params.apiGroup)
      errs.push(...field.invalidEach(p.child('apiGroup'), params.apiGroup, isDNS1123Subdomain(params.apiGroup)));
    if (params.scope !== undefined && params.scope !== 'Cluster' && params.scope !== 'Namespace')
      errs.push(field.notSupported(p.child('scope'), params.scope, ['Cluster', 'Namespace']));
    if (params.scope === 'Namespace' && !params.namespace)
      errs.push(field.required(p.child('namespace'), '`parameters.scope` is set to "Namespace"'));
    if (params.scope !== 'Namespace' && params.namespace !== undefined)
      errs.push(field.forbidden(p.child('namespace'), '`parameters.scope` is set to "Cluster"'));
  }
  return errs;
}

/** Validation of an IngressClass update: the controller never changes. */
export function validateIngressClassUpdate(ic: IngressClass, old: IngressClass): FieldError[] {
  return [
    ...validateIngressClass(ic),
    ...validateImmutableField(ic.spec?.controller, old.spec?.controller, new FieldPath('spec', 'controller')),
  ];
}

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

/** The prefix length of a CIDR and its address, or undefined when it is not one. */
function parseCIDR(cidr: string): { ip: Uint8Array; bits: number } | undefined {
  const [addr, len, extra] = cidr.split('/');
  if (addr === undefined || len === undefined || extra !== undefined || !/^\d+$/.test(len)) return undefined;
  const ip = parseIP(addr);
  if (!ip) return undefined;
  const bits = Number(len);
  const max = addr.includes(':') ? 128 : 32;
  return bits <= max ? { ip: addr.includes(':') ? ip : ip.slice(-4), bits } : undefined;
}

function contains(outer: { ip: Uint8Array; bits: number }, inner: { ip: Uint8Array; bits: number }): boolean {
  if (outer.ip.length !== inner.ip.length || inner.bits < outer.bits) return false;
  for (let b = 0; b < outer.bits; b++) {
    const byte = b >> 3;
    const mask = 0x80 >> (b & 7);
    if (((outer.ip[byte] ?? 0) & mask) !== ((inner.ip[byte] ?? 0) & mask)) return false;
  }
  return true;
}

type Peer = NonNullable<NonNullable<NonNullable<NetworkPolicy['spec']>['ingress']>[number]['from']>[number];
type Port = NonNullable<NonNullable<NonNullable<NetworkPolicy['spec']>['ingress']>[number]['ports']>[number];

function validatePort(port: Port, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (port.protocol !== undefined && !PROTOCOLS.includes(port.protocol))
    errs.push(field.notSupported(path.child('protocol'), port.protocol, PROTOCOLS));
  if (port.port === undefined) {
    if (port.endPort !== undefined)
      errs.push(field.required(path.child('port'), 'must specify the port when endPort is set'));
    return errs;
  }
  if (typeof port.port === 'number') {
    errs.push(...field.invalidEach(path.child('port'), port.port, isValidPortNum(port.port)));
    if (port.endPort !== undefined) {
      if (port.endPort < port.port)
        errs.push(field.invalid(path.child('endPort'), port.endPort, 'must be greater than or equal to `port`'));
      errs.push(...field.invalidEach(path.child('endPort'), port.endPort, isValidPortNum(port.endPort)));
    }
  } else {
    if (port.endPort !== undefined)
      errs.push(field.forbidden(path.child('endPort'), 'may not be specified when `port` is non-numeric'));
    errs.push(...field.invalidEach(path.child('port'), port.port, isValidPortName(port.port)));
  }
  return errs;
}

function validatePeer(peer: Peer, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let set = 0;
  if (peer.podSelector) {
    set++;
    errs.push(...validateLabelSelector(peer.podSelector, path.child('podSelector')));
  }
  if (peer.namespaceSelector) {
    set++;
    errs.push(...validateLabelSelector(peer.namespaceSelector, path.child('namespaceSelector')));
  }
  if (peer.ipBlock) {
    set++;
    const p = path.child('ipBlock');
    const cidr = peer.ipBlock.cidr ?? '';
    if (!cidr) errs.push(field.required(p.child('cidr'), ''));
    const outer = parseCIDR(cidr);
    if (cidr && !outer) errs.push(field.invalid(p.child('cidr'), cidr, 'must be a valid CIDR'));
    (peer.ipBlock.except ?? []).forEach((ex, i) => {
      const inner = parseCIDR(ex);
      if (!inner) errs.push(field.invalid(p.child('except').index(i), ex, 'must be a valid CIDR'));
      else if (outer && (!contains(outer, inner) || inner.bits <= outer.bits))
        errs.push(field.invalid(p.child('except').index(i), ex, 'must be a strict subset of `cidr`'));
    });
  }
  if (set === 0) errs.push(field.required(path, 'must specify a peer'));
  else if (peer.ipBlock && set > 1) errs.push(field.forbidden(path, 'may not specify both ipBlock and another peer'));
  return errs;
}

/** Validation of a NetworkPolicy (`ValidateNetworkPolicySpec`). */
export function validateNetworkPolicy(np: NetworkPolicy): FieldError[] {
  const errs: FieldError[] = [];
  const spec = np.spec;
  const specPath = new FieldPath('spec');
  if (!spec) return errs;
  errs.push(...validateLabelSelector(spec.podSelector, specPath.child('podSelector')));
  (spec.ingress ?? []).forEach((rule, i) => {
    const p = specPath.child('ingress').index(i);
    (rule.ports ?? []).forEach((port, j) => errs.push(...validatePort(port, p.child('ports').index(j))));
    (rule.from ?? []).forEach((peer, j) => errs.push(...validatePeer(peer, p.child('from').index(j))));
  });
  (spec.egress ?? []).forEach((rule, i) => {
    const p = specPath.child('egress').index(i);
    (rule.ports ?? []).forEach((port, j) => errs.push(...validatePort(port, p.child('ports').index(j))));
    (rule.to ?? []).forEach((peer, j) => errs.push(...validatePeer(peer, p.child('to').index(j))));
  });
  const types = spec.policyTypes ?? [];
  types.forEach((t, i) => {
    if (t !== 'Ingress' && t !== 'Egress')
      errs.push(field.notSupported(specPath.child('policyTypes').index(i), t, ['Egress', 'Ingress']));
  });
  if (types.length > 2)
    errs.push(field.invalid(specPath.child('policyTypes'), types, 'may not specify more than two policyTypes'));
  return errs;
}
