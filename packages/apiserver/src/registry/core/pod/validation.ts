/**
 * Validation of pod specs and pod templates (model: Kubernetes 1.21 `pkg/apis/core/validation/validation.go`,
 * `ValidatePodSpec`, `ValidatePodTemplateSpec`, `ValidatePodUpdate`). Shared by every kind that embeds a pod
 * template: ReplicationController, the apps kinds, Job and CronJob. Every function returns all the problems it
 * finds and never throws, whatever the shape of its input (objects reach here decoded against their schema, but a
 * validator must not crash on a partial object).
 */
import {
  type Container,
  type FieldError,
  type FieldPath,
  field,
  inclusiveRangeError,
  isDNS1123Label,
  isDNS1123Subdomain,
  isEnvVarName,
  isQualifiedName,
  isValidLabelValue,
  isValidPortName,
  isValidPortNum,
  type PodSpec,
  type PodTemplateSpec,
  type Probe,
  type Toleration,
  validateAnnotations,
  validateLabelName,
  validateLabels,
} from '@platform/api';

import { compareQuantities, parseQuantityValue, quantityError } from './quantity';

const MAX_INT32 = 2147483647;

/** The restart policies of a pod. */
export const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
/** The DNS policies of a pod. */
export const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);

type Loose<T> = { [K in keyof T]?: T[K] | null };

function each(path: FieldPath, value: unknown, msgs: string[]): FieldError[] {
  return msgs.map((m) => field.invalid(path, value, m));
}

function nonNegative(value: number | null | undefined, path: FieldPath): FieldError[] {
  return typeof value === 'number' && value < 0
    ? [field.invalid(path, value, 'must be greater than or equal to 0')]
    : [];
}

/** A resource name a container may request: cpu, memory, ephemeral-storage, hugepages-*, or a domain-qualified name. */
function validateContainerResourceName(name: string, path: FieldPath): FieldError[] {
  const errs = each(path, name, isQualifiedName(name));
  if (errs.length) return errs;
  if (!name.includes('/') && !STANDARD_CONTAINER_RESOURCES.has(name) && !name.startsWith('hugepages-')) {
    return [field.invalid(path, name, 'must be a standard resource for containers')];
  }
  return [];
}

/** `resources`: names valid, quantities valid and non-negative, every request at most its limit. */
export function validateResourceRequirements(
  r: Loose<{ limits: Record<string, string>; requests: Record<string, string> }> | null | undefined,
  path: FieldPath,
): FieldError[] {
  const errs: FieldError[] = [];
  if (!r) return errs;
  const limits = new Map<string, ReturnType<typeof parseQuantityValue>>();
  for (const [which, map] of [
    ['limits', r.limits],
    ['requests', r.requests],
  ] as const) {
    for (const [name, value] of Object.entries(map ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const p = path.child(which).key(name);
      errs.push(...validateContainerResourceName(name, p));
      const q = parseQuantityValue(value);
      if (!q) {
        errs.push(field.invalid(p, value, quantityError(value)));
        continue;
      }
      if (q.sign() < 0) errs.push(field.invalid(p, value, 'must be greater than or equal to 0'));
      if (which === 'limits') limits.set(name, q);
      else {
        const limit = limits.get(name);
        if (limit && compareQuantities(q, limit) > 0) {
          errs.push(field.invalid(p, value, `must be less than or equal to ${name} limit`));
        }
      }
    }
  }
  return errs;
}

function validatePortNumOrName(port: unknown, path: FieldPath): FieldError[] {
  if (typeof port === 'number') return each(path, port, isValidPortNum(port));
  if (typeof port === 'string') {
    if (port === '') return [field.required(path, '')];
    return each(path, port, isValidPortName(port));
  }
  return [field.required(path, '')];
}

/** A probe or lifecycle handler: exactly one of exec, httpGet, tcpSocket. */
function validateHandler(h: Record<string, unknown>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const kinds = (['exec', 'httpGet', 'tcpSocket'] as const).filter((k) => h[k] !== undefined && h[k] !== null);
  if (kinds.length === 0) return [field.required(path, 'must specify a handler type')];
  for (const k of kinds.slice(1)) errs.push(field.forbidden(path.child(k), 'may not specify more than 1 handler type'));
  const first = kinds[0];
  if (first === 'exec') {
    const cmd = (h.exec as { command?: string[] }).command;
    if (!cmd || cmd.length === 0) errs.push(field.required(path.child('exec', 'command'), ''));
  } else if (first === 'httpGet') {
    const g = h.httpGet as { path?: string; port?: unknown; scheme?: string };
    if (!g.path) errs.push(field.required(path.child('httpGet', 'path'), ''));
    errs.push(...validatePortNumOrName(g.port, path.child('httpGet', 'port')));
    if (g.scheme && !['HTTP', 'HTTPS'].includes(g.scheme))
      errs.push(field.notSupported(path.child('httpGet', 'scheme'), g.scheme, ['HTTP', 'HTTPS']));
  } else if (first === 'tcpSocket') {
    errs.push(...validatePortNumOrName((h.tcpSocket as { port?: unknown }).port, path.child('tcpSocket', 'port')));
  }
  return errs;
}

function validateProbe(p: Probe | null | undefined, path: FieldPath, successMustBeOne: boolean): FieldError[] {
  if (!p) return [];
  const errs = validateHandler(p as Record<string, unknown>, path);
  errs.push(...nonNegative(p.initialDelaySeconds, path.child('initialDelaySeconds')));
  errs.push(...nonNegative(p.timeoutSeconds, path.child('timeoutSeconds')));
  errs.push(...nonNegative(p.periodSeconds, path.child('periodSeconds')));
  errs.push(...nonNegative(p.successThreshold, path.child('successThreshold')));
  errs.push(...nonNegative(p.failureThreshold, path.child('failureThreshold')));
  if (successMustBeOne && p.successThreshold !== undefined && p.successThreshold !== 1) {
    errs.push(field.invalid(path.child('successThreshold'), p.successThreshold, 'must be 1'));
  }
  return errs;
}

function validateEnv(env: Container['env'], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  (env ?? []).forEach((ev, i) => {
    const p = path.index(i);
    if (!ev.name) errs.push(field.required(p.child('name'), ''));
    else errs.push(...each(p.child('name'), ev.name, isEnvVarName(ev.name)));
    if (ev.valueFrom) {
      const sources = Object.entries(ev.valueFrom).filter(([, v]) => v !== undefined && v !== null);
      if (sources.length === 0)
        errs.push(
          field.invalid(
            p.child('valueFrom'),
            '',
            'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`',
          ),
        );
      else if (sources.length > 1)
        errs.push(field.invalid(p.child('valueFrom'), '', 'may not have more than one field specified at a time'));
      if (ev.value)
        errs.push(field.invalid(p.child('valueFrom'), '', 'may not be specified when `value` is not empty'));
    }
  });
  return errs;
}

function validateContainers(
  containers: Container[] | null | undefined,
  volumes: Set<string>,
  path: FieldPath,
  o: { required: boolean; isInit: boolean; portNames: Set<string> },
  allNames: Set<string>,
): FieldError[] {
  const errs: FieldError[] = [];
  if (!containers || containers.length === 0) {
    if (o.required) errs.push(field.required(path, ''));
    return errs;
  }
  containers.forEach((c, i) => {
    const p = path.index(i);
    if (!c.name) errs.push(field.required(p.child('name'), ''));
    else {
      errs.push(...each(p.child('name'), c.name, isDNS1123Label(c.name)));
      if (allNames.has(c.name)) errs.push(field.duplicate(p.child('name'), c.name));
      allNames.add(c.name);
    }
    if (!c.image) errs.push(field.required(p.child('image'), ''));
    else if (c.image.trim() !== c.image)
      errs.push(field.invalid(p.child('image'), c.image, 'must not have leading or trailing whitespace'));
    (c.ports ?? []).forEach((port, j) => {
      const pp = p.child('ports').index(j);
      if (port.name) {
        errs.push(...each(pp.child('name'), port.name, isValidPortName(port.name)));
        if (o.portNames.has(port.name)) errs.push(field.duplicate(pp.child('name'), port.name));
        o.portNames.add(port.name);
      }
      if (!port.containerPort) errs.push(field.required(pp.child('containerPort'), ''));
      else errs.push(...each(pp.child('containerPort'), port.containerPort, isValidPortNum(port.containerPort)));
      if (port.hostPort) errs.push(...each(pp.child('hostPort'), port.hostPort, isValidPortNum(port.hostPort)));
      if (!port.protocol) errs.push(field.required(pp.child('protocol'), ''));
      else if (!PROTOCOLS.includes(port.protocol))
        errs.push(field.notSupported(pp.child('protocol'), port.protocol, PROTOCOLS));
    });
    errs.push(...validateEnv(c.env, p.child('env')));
    (c.envFrom ?? []).forEach((ef, j) => {
      const ep = p.child('envFrom').index(j);
      if (ef.prefix) errs.push(...each(ep.child('prefix'), ef.prefix, isEnvVarName(ef.prefix)));
      if (ef.configMapRef && ef.secretRef)
        errs.push(field.invalid(ep, '', 'may not have more than one field specified at a time'));
      else if (!ef.configMapRef && !ef.secretRef)
        errs.push(field.invalid(ep, '', 'must specify one of: `configMapRef` or `secretRef`'));
    });
    const mountPaths = new Set<string>();
    (c.volumeMounts ?? []).forEach((m, j) => {
      const mp = p.child('volumeMounts').index(j);
      if (!m.name) errs.push(field.required(mp.child('name'), ''));
      else if (!volumes.has(m.name)) errs.push(field.notFound(mp.child('name'), m.name));
      if (!m.mountPath) errs.push(field.required(mp.child('mountPath'), ''));
      else if (mountPaths.has(m.mountPath))
        errs.push(field.invalid(mp.child('mountPath'), m.mountPath, 'must be unique'));
      else mountPaths.add(m.mountPath);
    });
    errs.push(...validateResourceRequirements(c.resources, p.child('resources')));
    if (o.isInit) {
      for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
        if (c[probe]) errs.push(field.forbidden(p.child(probe), `may not be set for init containers`));
      }
    } else {
      errs.push(...validateProbe(c.livenessProbe, p.child('livenessProbe'), true));
      errs.push(...validateProbe(c.readinessProbe, p.child('readinessProbe'), false));
      errs.push(...validateProbe(c.startupProbe, p.child('startupProbe'), true));
    }
    for (const hook of ['postStart', 'preStop'] as const) {
      const h = c.lifecycle?.[hook];
      if (h) errs.push(...validateHandler(h as Record<string, unknown>, p.child('lifecycle', hook)));
    }
    if (c.stdinOnce && !c.stdin) errs.push(field.invalid(p.child('stdinOnce'), true, '`stdinOnce` requires `stdin`'));
    if (c.tty && !c.stdin) errs.push(field.invalid(p.child('tty'), true, '`tty` requires `stdin`'));
  });
  return errs;
}

/** `tolerations` (model: `ValidateTolerations`). */
export function validateTolerations(tolerations: Toleration[] | null | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  (tolerations ?? []).forEach((t, i) => {
    const p = path.index(i);
    if (t.key) errs.push(...validateLabelName(t.key, p.child('key')));
    if (!t.key && t.operator !== 'Exists') {
      errs.push(
        field.invalid(
          p.child('operator'),
          t.operator ?? '',
          'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
      );
    }
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && t.effect !== 'NoExecute') {
      errs.push(
        field.invalid(p.child('effect'), t.effect ?? '', "effect must be 'NoExecute' when `tolerationSeconds` is set"),
      );
    }
    if (!t.operator || t.operator === 'Equal') {
      if (t.value) errs.push(...each(p.child('value'), t.value, isValidLabelValue(t.value)));
    } else if (t.operator === 'Exists') {
      if (t.value)
        errs.push(field.invalid(p.child('operator'), t.operator, "value must be empty when `operator` is 'Exists'"));
    } else {
      errs.push(field.notSupported(p.child('operator'), t.operator, ['Equal', 'Exists']));
    }
    if (t.effect && !TAINT_EFFECTS.includes(t.effect))
      errs.push(field.notSupported(p.child('effect'), t.effect, TAINT_EFFECTS));
  });
  return errs;
}

function validateVolumes(spec: Loose<PodSpec>, path: FieldPath): { errs: FieldError[]; names: Set<string> } {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  (spec.volumes ?? []).forEach((v, i) => {
    const p = path.index(i);
    if (!v.name) errs.push(field.required(p.child('name'), ''));
    else {
      errs.push(...each(p.child('name'), v.name, isDNS1123Label(v.name)));
      if (names.has(v.name)) errs.push(field.duplicate(p.child('name'), v.name));
      names.add(v.name);
    }
    const sources = Object.entries(v).filter(([k, s]) => k !== 'name' && s !== undefined && s !== null);
    if (sources.length === 0) errs.push(field.required(p, 'must specify a volume type'));
    for (const [k] of sources.slice(1))
      errs.push(field.forbidden(p.child(k), 'may not specify more than 1 volume type'));
    const pvc = (v as { persistentVolumeClaim?: { claimName?: string } }).persistentVolumeClaim;
    if (pvc && !pvc.claimName) errs.push(field.required(p.child('persistentVolumeClaim', 'claimName'), ''));
    const hostPath = (v as { hostPath?: { path?: string } }).hostPath;
    if (hostPath && !hostPath.path) errs.push(field.required(p.child('hostPath', 'path'), ''));
  });
  return { errs, names };
}

/** A pod's spec (model: `ValidatePodSpec`). */
export function validatePodSpec(spec: Loose<PodSpec> | null | undefined, path: FieldPath): FieldError[] {
  if (!spec) return [field.required(path, '')];
  const vol = validateVolumes(spec, path.child('volumes'));
  const errs = [...vol.errs];
  const names = new Set<string>();
  const portNames = new Set<string>();
  errs.push(
    ...validateContainers(
      spec.containers,
      vol.names,
      path.child('containers'),
      { required: true, isInit: false, portNames },
      names,
    ),
    ...validateContainers(
      spec.initContainers,
      vol.names,
      path.child('initContainers'),
      { required: false, isInit: true, portNames },
      names,
    ),
  );
  if (!spec.restartPolicy) errs.push(field.required(path.child('restartPolicy'), ''));
  else if (!RESTART_POLICIES.includes(spec.restartPolicy))
    errs.push(field.notSupported(path.child('restartPolicy'), spec.restartPolicy, RESTART_POLICIES));
  if (!spec.dnsPolicy) errs.push(field.required(path.child('dnsPolicy'), ''));
  else if (!DNS_POLICIES.includes(spec.dnsPolicy))
    errs.push(field.notSupported(path.child('dnsPolicy'), spec.dnsPolicy, DNS_POLICIES));
  if (spec.dnsPolicy === 'None' && !spec.dnsConfig)
    errs.push(field.required(path.child('dnsConfig'), 'must provide `dnsConfig` when `dnsPolicy` is None'));
  errs.push(...validateLabels(spec.nodeSelector ?? undefined, path.child('nodeSelector')));
  for (const [f, check] of [
    ['serviceAccountName', isDNS1123Subdomain],
    ['nodeName', isDNS1123Subdomain],
    ['hostname', isDNS1123Label],
    ['subdomain', isDNS1123Label],
    ['priorityClassName', isDNS1123Subdomain],
  ] as const) {
    const v = spec[f];
    if (v) errs.push(...each(path.child(f), v, check(v)));
  }
  const ads = spec.activeDeadlineSeconds;
  if (ads !== undefined && ads !== null && (ads < 1 || ads > MAX_INT32)) {
    errs.push(field.invalid(path.child('activeDeadlineSeconds'), ads, inclusiveRangeError(1, MAX_INT32)));
  }
  errs.push(...nonNegative(spec.terminationGracePeriodSeconds, path.child('terminationGracePeriodSeconds')));
  errs.push(...validateTolerations(spec.tolerations, path.child('tolerations')));
  (spec.imagePullSecrets ?? []).forEach((s, i) => {
    if (!s.name) errs.push(field.required(path.child('imagePullSecrets').index(i).child('name'), ''));
  });
  for (const [k, v] of Object.entries(spec.overhead ?? {})) {
    if (!parseQuantityValue(v)) errs.push(field.invalid(path.child('overhead').key(k), v, quantityError(v)));
  }
  (spec.hostAliases ?? []).forEach((a, i) => {
    for (const h of a.hostnames ?? []) {
      errs.push(...each(path.child('hostAliases').index(i).child('hostnames'), h, isDNS1123Subdomain(h)));
    }
  });
  (spec.readinessGates ?? []).forEach((g, i) => {
    errs.push(
      ...each(
        path.child('readinessGates').index(i).child('conditionType'),
        g.conditionType,
        isQualifiedName(g.conditionType ?? ''),
      ),
    );
  });
  return errs;
}

/**
 * A pod template (model: `ValidatePodTemplateSpec`): its labels and annotations, and its spec. `restartPolicies`
 * narrows the restart policies the owner allows (jobs: OnFailure and Never; the apps kinds: Always).
 */
export function validatePodTemplateSpec(
  template: PodTemplateSpec | null | undefined,
  path: FieldPath,
  restartPolicies?: readonly string[],
): FieldError[] {
  if (!template) return [field.required(path, '')];
  const errs: FieldError[] = [
    ...validateLabels(template.metadata?.labels, path.child('metadata', 'labels')),
    ...validateAnnotations(template.metadata?.annotations, path.child('metadata', 'annotations')),
    ...validatePodSpec(template.spec, path.child('spec')),
  ];
  const policy = template.spec?.restartPolicy;
  if (restartPolicies && policy && !restartPolicies.includes(policy)) {
    errs.push(field.notSupported(path.child('spec', 'restartPolicy'), policy, restartPolicies));
  }
  return errs;
}

function tolerationKey(t: Toleration): string {
  return JSON.stringify([t.key ?? '', t.operator ?? '', t.value ?? '', t.effect ?? '']);
}

/**
 * What an update may change in a pod's spec (model: `ValidatePodUpdate`): container and init container images,
 * `activeDeadlineSeconds` (set, or lowered), and `tolerations` (additions only; a NoExecute toleration's seconds
 * may be lowered). Anything else is a `Forbidden` error on `spec`.
 */
export function validatePodSpecUpdate(spec: Loose<PodSpec>, old: Loose<PodSpec>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const containers = spec.containers ?? [];
  const oldContainers = old.containers ?? [];
  if (containers.length !== oldContainers.length) {
    return [field.forbidden(path.child('containers'), 'pod updates may not add or remove containers')];
  }
  const inits = spec.initContainers ?? [];
  const oldInits = old.initContainers ?? [];
  if (inits.length !== oldInits.length) {
    return [field.forbidden(path.child('initContainers'), 'pod updates may not add or remove containers')];
  }
  const oldAds = old.activeDeadlineSeconds;
  const ads = spec.activeDeadlineSeconds;
  if (oldAds !== undefined && oldAds !== null) {
    if (ads === undefined || ads === null) {
      errs.push(
        field.invalid(
          path.child('activeDeadlineSeconds'),
          ads ?? null,
          'must not update from a positive integer to nil value',
        ),
      );
    } else if (ads > oldAds) {
      errs.push(
        field.invalid(path.child('activeDeadlineSeconds'), ads, 'must be less than or equal to previous value'),
      );
    }
  }
  const oldTolerations = old.tolerations ?? [];
  const byKey = new Map((spec.tolerations ?? []).map((t) => [tolerationKey(t), t]));
  for (const ot of oldTolerations) {
    const nt = byKey.get(tolerationKey(ot));
    if (!nt) {
      errs.push(
        field.forbidden(
          path.child('tolerations'),
          `existing toleration can not be modified except its tolerationSeconds`,
        ),
      );
      break;
    }
    const os = ot.tolerationSeconds;
    const ns = nt.tolerationSeconds;
    if (os !== undefined && os !== null && (ns === undefined || ns === null || ns > os || ns < 0)) {
      errs.push(
        field.forbidden(path.child('tolerations'), 'only tolerationSeconds may be decreased on an existing toleration'),
      );
      break;
    }
  }
  // Everything else must stay as it was: compare with the mutable fields copied over from the new spec.
  const munged = structuredClone(old);
  munged.containers = oldContainers.map((c, i) => ({ ...c, image: containers[i]?.image ?? '' }));
  if (old.initContainers !== undefined || spec.initContainers !== undefined)
    munged.initContainers = oldInits.map((c, i) => ({ ...c, image: inits[i]?.image ?? '' }));
  if (ads === undefined) delete munged.activeDeadlineSeconds;
  else munged.activeDeadlineSeconds = ads;
  if (spec.tolerations === undefined) delete munged.tolerations;
  else munged.tolerations = spec.tolerations;
  if (canonical(munged) !== canonical(spec)) {
    errs.push(
      field.forbidden(
        path,
        'pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds` or `spec.tolerations` (only additions to existing tolerations)',
      ),
    );
  }
  return errs;
}

/** JSON with sorted keys, so that key order never counts as a change. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}
