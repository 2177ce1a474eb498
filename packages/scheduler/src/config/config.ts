/**
 * `KubeSchedulerConfiguration` of `kubescheduler.config.platform/v1beta1` (model: Kubernetes 1.21
 * `pkg/scheduler/apis/config/v1beta1` and `validation`): loading (YAML or JSON), defaulting, and validation with
 * errors naming the field (`profiles[1].schedulerName: Duplicate value: "x"`).
 */
import { readFileSync } from 'node:fs';

import { type FieldError, FieldPath, field, fieldErrorToString, isQualifiedName } from '@platform/api';
import { RESOURCE_LOCKS } from '@platform/common';
import { load as loadYaml } from 'js-yaml';

import { type ExtenderConfig } from '../extender/http-extender';
import { EXTENSION_POINTS } from '../framework/framework';
import { type PluginsSection } from './defaults';
import { type ProfileSection } from './profile';

export const API_VERSION = 'kubescheduler.config.platform/v1beta1';
export const KIND = 'KubeSchedulerConfiguration';
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

/** The leader election section (durations as text, `15s`). */
export interface LeaderElectionSection {
  leaderElect: boolean;
  leaseDuration: string;
  renewDeadline: string;
  retryPeriod: string;
  resourceLock: string;
  resourceName: string;
  resourceNamespace: string;
}

/** The client connection section. */
export interface ClientConnectionSection {
  kubeconfig: string;
  acceptContentTypes: string;
  contentType: string;
  qps: number;
  burst: number;
}

/** The whole configuration. */
export interface KubeSchedulerConfiguration {
  apiVersion: string;
  kind: string;
  parallelism: number;
  leaderElection: LeaderElectionSection;
  clientConnection: ClientConnectionSection;
  healthzBindAddress: string;
  metricsBindAddress: string;
  enableProfiling: boolean;
  enableContentionProfiling: boolean;
  percentageOfNodesToScore: number;
  podInitialBackoffSeconds: number;
  podMaxBackoffSeconds: number;
  profiles: ProfileSection[];
  extenders: unknown[];
}

/** The defaults of v1beta1 (with the platform's lock name and namespace and content type). */
export function defaultConfiguration(): KubeSchedulerConfiguration {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    parallelism: 16,
    leaderElection: {
      leaderElect: true,
      leaseDuration: '15s',
      renewDeadline: '10s',
      retryPeriod: '2s',
      resourceLock: 'leases',
      resourceName: 'scheduler',
      resourceNamespace: 'system',
    },
    clientConnection: {
      kubeconfig: '',
      acceptContentTypes: '',
      contentType: 'application/vnd.platform.protobuf',
      qps: 50,
      burst: 100,
    },
    healthzBindAddress: '0.0.0.0:10251',
    metricsBindAddress: '0.0.0.0:10251',
    enableProfiling: true,
    enableContentionProfiling: true,
    percentageOfNodesToScore: 0,
    podInitialBackoffSeconds: 1,
    podMaxBackoffSeconds: 10,
    profiles: [{ schedulerName: DEFAULT_SCHEDULER_NAME }],
    extenders: [],
  };
}

/** The fields of the configuration; any other is refused (a misspelt field must not be silently ignored). */
const KNOWN_FIELDS = new Set(Object.keys(defaultConfiguration()));

/** A configuration file that cannot be used: every problem, each naming its field. */
export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly errors: string[],
  ) {
    super(`${file ? `${file}: ` : ''}${errors.join('; ')}`);
  }
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Fills the fields `raw` leaves out from the defaults (one level into the sections, as Go's defaulting). */
export function applyDefaults(raw: Record<string, unknown>): KubeSchedulerConfiguration {
  const d = defaultConfiguration();
  const out = { ...d, ...raw } as KubeSchedulerConfiguration;
  out.leaderElection = { ...d.leaderElection, ...(isObj(raw.leaderElection) ? raw.leaderElection : {}) };
  out.clientConnection = { ...d.clientConnection, ...(isObj(raw.clientConnection) ? raw.clientConnection : {}) };
  if (!Array.isArray(raw.profiles) || raw.profiles.length === 0) out.profiles = d.profiles;
  else if (raw.profiles.length === 1 && isObj(raw.profiles[0]) && raw.profiles[0].schedulerName === undefined)
    out.profiles = [{ ...(raw.profiles[0] as ProfileSection), schedulerName: DEFAULT_SCHEDULER_NAME }];
  return out;
}

const DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;

/** A Go duration text in ms (`1m30s` → 90000). */
export function parseDurationMs(s: string): number {
  if (!DURATION.test(s)) throw new Error(`invalid duration ${JSON.stringify(s)}`);
  const unit: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let ms = 0;
  for (const m of s.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g))
    ms += Number(m[1]) * (unit[m[2] as string] as number);
  return ms;
}

function validateHostPort(path: FieldPath, v: unknown): FieldError[] {
  if (v === '' || v === undefined) return [];
  const m = /^(.*):(\d+)$/.exec(String(v));
  if (!m || Number(m[2]) > 65535) return [field.invalid(path, v, 'must be a valid host:port')];
  return [];
}

const NUMBER_ARGS: Record<string, (args: Record<string, unknown>, p: FieldPath) => FieldError[]> = {
  InterPodAffinity: (a, p) => {
    const w = a.hardPodAffinityWeight;
    return w !== undefined && (typeof w !== 'number' || w < 0 || w > 100)
      ? [field.invalid(p.child('hardPodAffinityWeight'), w, 'not in valid range [0-100]')]
      : [];
  },
  VolumeBinding: (a, p) => {
    const errs: FieldError[] = [];
    const t = a.bindTimeoutSeconds;
    if (t !== undefined && (typeof t !== 'number' || !Number.isInteger(t) || t < 0))
      errs.push(
        field.invalid(p.child('bindTimeoutSeconds'), t, 'invalid BindTimeoutSeconds, should not be a negative value'),
      );
    // 1.21's VolumeCapacityPriority gate is alpha (off): its shape is refused as 1.21 refuses it then.
    if (a.shape !== undefined)
      errs.push(
        field.invalid(p.child('shape'), a.shape, 'unsupported when VolumeCapacityPriority feature is disabled'),
      );
    return errs;
  },
  NodeResourcesLeastAllocated: (a, p) => validateResources(a.resources, p.child('resources')),
  NodeResourcesMostAllocated: (a, p) => validateResources(a.resources, p.child('resources')),
  RequestedToCapacityRatio: (a, p) => {
    const errs = validateResources(a.resources, p.child('resources'));
    const shape = a.shape;
    if (shape === undefined) return errs;
    if (!Array.isArray(shape) || shape.length === 0)
      return [...errs, field.required(p.child('shape'), 'at least one point must be specified')];
    let prev = -1;
    shape.forEach((pt: { utilization?: unknown; score?: unknown }, i) => {
      const sp = p.child('shape').index(i);
      const u = pt?.utilization;
      const s = pt?.score;
      if (typeof u !== 'number' || u < 0 || u > 100)
        errs.push(field.invalid(sp.child('utilization'), u, 'not in valid range [0-100]'));
      else if (u <= prev)
        errs.push(field.invalid(sp.child('utilization'), u, 'values are not sorted in increasing order'));
      else prev = u;
      if (typeof s !== 'number' || s < 0 || s > 10)
        errs.push(field.invalid(sp.child('score'), s, 'not in valid range [0-10]'));
    });
    return errs;
  },
  PodTopologySpread: (a, p) => {
    const errs: FieldError[] = [];
    const cs = a.defaultConstraints;
    if (cs !== undefined && !Array.isArray(cs))
      return [field.invalid(p.child('defaultConstraints'), cs, 'must be a list')];
    ((cs as Record<string, unknown>[] | undefined) ?? []).forEach((c, i) => {
      const cp = p.child('defaultConstraints').index(i);
      if (typeof c.maxSkew !== 'number' || c.maxSkew <= 0)
        errs.push(field.invalid(cp.child('maxSkew'), c.maxSkew, 'must be greater than zero'));
      if (!c.topologyKey) errs.push(field.required(cp.child('topologyKey'), 'can not be empty'));
      if (c.whenUnsatisfiable !== 'DoNotSchedule' && c.whenUnsatisfiable !== 'ScheduleAnyway')
        errs.push(
          field.notSupported(cp.child('whenUnsatisfiable'), c.whenUnsatisfiable, ['DoNotSchedule', 'ScheduleAnyway']),
        );
      if (c.labelSelector !== undefined)
        errs.push(
          field.forbidden(
            cp.child('labelSelector'),
            'constraint must not define a selector, as they deduced for each pod',
          ),
        );
    });
    if (a.defaultingType !== undefined && a.defaultingType !== 'System' && a.defaultingType !== 'List')
      errs.push(field.notSupported(p.child('defaultingType'), a.defaultingType, ['System', 'List']));
    if (a.defaultingType === 'System' && Array.isArray(cs) && cs.length)
      errs.push(
        field.invalid(
          p.child('defaultingType'),
          a.defaultingType,
          'when .defaultConstraints are not empty, defaultingType can only be List',
        ),
      );
    return errs;
  },
};

function validateResources(rs: unknown, p: FieldPath): FieldError[] {
  if (rs === undefined) return [];
  if (!Array.isArray(rs)) return [field.invalid(p, rs, 'must be a list')];
  const errs: FieldError[] = [];
  rs.forEach((r: { name?: unknown; weight?: unknown }, i) => {
    if (typeof r?.weight !== 'number' || r.weight <= 0 || r.weight > 100)
      errs.push(field.invalid(p.index(i).child('weight'), r?.weight, 'resource weight not in range [1-100]'));
  });
  return errs;
}

/** Every problem of a defaulted configuration (`ValidateKubeSchedulerConfiguration`). */
export function validateConfiguration(
  c: KubeSchedulerConfiguration,
  knownPlugins?: (n: string) => boolean,
): FieldError[] {
  const errs: FieldError[] = [];
  const root = new FieldPath();
  if (c.apiVersion !== API_VERSION)
    errs.push(field.notSupported(root.child('apiVersion'), c.apiVersion, [API_VERSION]));
  if (c.kind !== KIND) errs.push(field.notSupported(root.child('kind'), c.kind, [KIND]));
  if (!(Number.isInteger(c.parallelism) && c.parallelism > 0))
    errs.push(field.invalid(root.child('parallelism'), c.parallelism, 'should be an integer value greater than zero'));
  const le = c.leaderElection;
  const lp = root.child('leaderElection');
  if (le.leaderElect) {
    const durs: Record<string, number> = {};
    for (const k of ['leaseDuration', 'renewDeadline', 'retryPeriod'] as const) {
      try {
        durs[k] = parseDurationMs(String(le[k]));
        if (durs[k] <= 0) errs.push(field.invalid(lp.child(k), le[k], 'must be greater than zero'));
      } catch {
        errs.push(field.invalid(lp.child(k), le[k], 'must be a duration such as 15s'));
      }
    }
    if ((durs.leaseDuration ?? 0) <= (durs.renewDeadline ?? 0) && durs.leaseDuration !== undefined)
      errs.push(
        field.invalid(lp.child('leaseDuration'), le.leaseDuration, 'LeaseDuration must be greater than RenewDeadline'),
      );
    if (!(RESOURCE_LOCKS as readonly string[]).includes(le.resourceLock))
      errs.push(field.notSupported(lp.child('resourceLock'), le.resourceLock, [...RESOURCE_LOCKS]));
    if (!le.resourceName) errs.push(field.required(lp.child('resourceName'), ''));
    if (!le.resourceNamespace) errs.push(field.required(lp.child('resourceNamespace'), ''));
  }
  const cc = c.clientConnection;
  const cp = root.child('clientConnection');
  if (typeof cc.qps !== 'number' || cc.qps < 0)
    errs.push(field.invalid(cp.child('qps'), cc.qps, 'must not be negative'));
  if (typeof cc.burst !== 'number' || cc.burst < 0)
    errs.push(field.invalid(cp.child('burst'), cc.burst, 'must not be negative'));
  if (cc.contentType !== 'application/vnd.platform.protobuf' && cc.contentType !== 'application/json')
    errs.push(
      field.notSupported(cp.child('contentType'), cc.contentType, [
        'application/vnd.platform.protobuf',
        'application/json',
      ]),
    );
  if (cc.acceptContentTypes)
    errs.push(
      field.invalid(
        cp.child('acceptContentTypes'),
        cc.acceptContentTypes,
        'not supported yet: responses are asked for in contentType (with JSON as the fallback)',
      ),
    );
  for (const k of Object.keys(c))
    if (!KNOWN_FIELDS.has(k)) errs.push(field.notSupported(root.child(k), k, [...KNOWN_FIELDS]));
  errs.push(...validateHostPort(root.child('healthzBindAddress'), c.healthzBindAddress));
  errs.push(...validateHostPort(root.child('metricsBindAddress'), c.metricsBindAddress));
  const pct = c.percentageOfNodesToScore;
  if (typeof pct !== 'number' || pct < 0 || pct > 100)
    errs.push(field.invalid(root.child('percentageOfNodesToScore'), pct, 'not in valid range [0-100]'));
  if (typeof c.podInitialBackoffSeconds !== 'number' || c.podInitialBackoffSeconds <= 0)
    errs.push(
      field.invalid(root.child('podInitialBackoffSeconds'), c.podInitialBackoffSeconds, 'must be greater than 0'),
    );
  if (typeof c.podMaxBackoffSeconds !== 'number' || c.podMaxBackoffSeconds < c.podInitialBackoffSeconds)
    errs.push(
      field.invalid(
        root.child('podMaxBackoffSeconds'),
        c.podMaxBackoffSeconds,
        'must be greater than or equal to PodInitialBackoffSeconds',
      ),
    );
  const pp = root.child('profiles');
  if (!Array.isArray(c.profiles) || c.profiles.length === 0) errs.push(field.required(pp, ''));
  const names = new Set<string>();
  let queueSort: string | undefined;
  (c.profiles ?? []).forEach((raw: unknown, i) => {
    const ip = pp.index(i);
    if (!isObj(raw)) {
      errs.push(field.invalid(ip, raw, 'must be an object'));
      return;
    }
    const p = raw as ProfileSection;
    if (!p.schedulerName) errs.push(field.required(ip.child('schedulerName'), ''));
    else if (names.has(p.schedulerName)) errs.push(field.duplicate(ip.child('schedulerName'), p.schedulerName));
    else names.add(p.schedulerName);
    errs.push(...validatePlugins(p.plugins, ip.child('plugins'), knownPlugins));
    const qs = JSON.stringify(p.plugins?.queueSort ?? null);
    if (i === 0) queueSort = qs;
    else if (qs !== queueSort)
      errs.push(
        field.invalid(ip.child('plugins', 'queueSort'), p.plugins?.queueSort ?? null, 'has to match for all profiles'),
      );
    const seen = new Set<string>();
    (p.pluginConfig ?? []).forEach((pc, j) => {
      const cpath = ip.child('pluginConfig').index(j);
      if (!pc?.name) {
        errs.push(field.required(cpath.child('name'), ''));
        return;
      }
      if (seen.has(pc.name)) errs.push(field.duplicate(cpath, pc.name));
      seen.add(pc.name);
      if (knownPlugins && !knownPlugins(pc.name)) errs.push(field.notFound(cpath.child('name'), pc.name));
      const v = NUMBER_ARGS[pc.name];
      if (v && pc.args !== undefined) {
        if (!isObj(pc.args)) errs.push(field.invalid(cpath.child('args'), pc.args, 'must be an object'));
        else errs.push(...v(pc.args, cpath.child('args')));
      }
    });
  });
  errs.push(...validateExtenders(root.child('extenders'), c.extenders));
  return errs;
}

const EXTENDER_FIELDS = new Set([
  'urlPrefix',
  'filterVerb',
  'preemptVerb',
  'prioritizeVerb',
  'weight',
  'bindVerb',
  'enableHTTPS',
  'tlsConfig',
  'httpTimeout',
  'nodeCacheCapable',
  'managedResources',
  'ignorable',
]);
const TLS_FIELDS = ['insecure', 'serverName', 'certFile', 'keyFile', 'caFile', 'certData', 'keyData', 'caData'];

/** A name of an extended resource (`example.com/gpu`): qualified, outside `kubernetes.io/`, quotable. */
function validateExtendedResourceName(p: FieldPath, name: unknown): FieldError[] {
  const msgs = typeof name === 'string' ? isQualifiedName(name) : ['must be a string'];
  if (msgs.length) return msgs.map((m) => field.invalid(p, name, m));
  const n = name as string;
  const native = !n.includes('/') || n.includes('kubernetes.io/');
  if (native || n.startsWith('requests.') || isQualifiedName(`requests.${n}`).length)
    return [field.invalid(p, n, 'is an invalid extended resource name')];
  return [];
}

/** The extenders (1.21 `validateExtenders`, and the types of each field). */
function validateExtenders(p: FieldPath, extenders: unknown): FieldError[] {
  if (extenders === undefined || extenders === null) return [];
  if (!Array.isArray(extenders)) return [field.invalid(p, extenders, 'must be a list')];
  const errs: FieldError[] = [];
  const managed = new Set<string>();
  let binders = 0;
  extenders.forEach((raw: unknown, i) => {
    const ip = p.index(i);
    if (!isObj(raw)) {
      errs.push(field.invalid(ip, raw, 'must be an object'));
      return;
    }
    for (const k of Object.keys(raw))
      if (!EXTENDER_FIELDS.has(k)) errs.push(field.notSupported(ip.child(k), k, [...EXTENDER_FIELDS]));
    const e = raw as Record<string, unknown>;
    let url: URL | undefined;
    try {
      url = new URL(String(e.urlPrefix ?? ''));
    } catch {
      url = undefined;
    }
    if (!e.urlPrefix) errs.push(field.required(ip.child('urlPrefix'), ''));
    else if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
      errs.push(field.invalid(ip.child('urlPrefix'), e.urlPrefix, 'must be an http or https URL'));
    for (const k of ['filterVerb', 'preemptVerb', 'prioritizeVerb', 'bindVerb'])
      if (e[k] !== undefined && typeof e[k] !== 'string')
        errs.push(field.invalid(ip.child(k), e[k], 'must be a string'));
    for (const k of ['enableHTTPS', 'nodeCacheCapable', 'ignorable'])
      if (e[k] !== undefined && typeof e[k] !== 'boolean')
        errs.push(field.invalid(ip.child(k), e[k], 'must be a boolean'));
    if (e.weight !== undefined && (typeof e.weight !== 'number' || !Number.isInteger(e.weight)))
      errs.push(field.invalid(ip.child('weight'), e.weight, 'must be an integer'));
    else if (e.prioritizeVerb && !((e.weight as number) > 0))
      errs.push(field.invalid(ip.child('weight'), e.weight ?? 0, 'must have a positive weight applied to it'));
    if (e.bindVerb) binders++;
    if (e.httpTimeout !== undefined) {
      try {
        parseDurationMs(String(e.httpTimeout));
      } catch {
        errs.push(field.invalid(ip.child('httpTimeout'), e.httpTimeout, 'must be a duration such as 30s'));
      }
    }
    if (e.tlsConfig !== undefined) {
      if (!isObj(e.tlsConfig)) errs.push(field.invalid(ip.child('tlsConfig'), e.tlsConfig, 'must be an object'));
      else
        for (const k of Object.keys(e.tlsConfig))
          if (!TLS_FIELDS.includes(k)) errs.push(field.notSupported(ip.child('tlsConfig', k), k, TLS_FIELDS));
    }
    const mr = e.managedResources;
    if (mr !== undefined && !Array.isArray(mr))
      errs.push(field.invalid(ip.child('managedResources'), mr, 'must be a list'));
    ((Array.isArray(mr) ? mr : []) as { name?: unknown }[]).forEach((r, j) => {
      const np = ip.child('managedResources').index(j).child('name');
      errs.push(...validateExtendedResourceName(np, r?.name));
      if (managed.has(String(r?.name)))
        errs.push(field.invalid(np, r?.name, 'duplicate extender managed resource name'));
      managed.add(String(r?.name));
    });
  });
  if (binders > 1)
    errs.push(field.invalid(p, `found ${binders} extenders implementing bind`, 'only one extender can implement bind'));
  return errs;
}

/** The extenders of a validated configuration, with their time-outs in ms. */
export function extenderConfigsOf(c: KubeSchedulerConfiguration): ExtenderConfig[] {
  return ((c.extenders ?? []) as (Omit<ExtenderConfig, 'httpTimeoutMs'> & { httpTimeout?: string })[]).map(
    ({ httpTimeout, ...e }) => ({ ...e, httpTimeoutMs: httpTimeout ? parseDurationMs(String(httpTimeout)) : 0 }),
  );
}

function validatePlugins(ps: PluginsSection | undefined, p: FieldPath, known?: (n: string) => boolean): FieldError[] {
  if (ps === undefined) return [];
  if (!isObj(ps)) return [field.invalid(p, ps, 'must be an object')];
  const errs: FieldError[] = [];
  for (const k of Object.keys(ps)) {
    if (!(EXTENSION_POINTS as readonly string[]).includes(k)) {
      errs.push(field.notSupported(p.child(k), k, EXTENSION_POINTS));
      continue;
    }
    const set = (
      ps as Record<string, { enabled?: { name: string; weight?: number }[]; disabled?: { name: string }[] }>
    )[k];
    (set?.enabled ?? []).forEach((e, i) => {
      const ep = p.child(k, 'enabled').index(i);
      if (!e?.name) errs.push(field.required(ep.child('name'), ''));
      else if (known && !known(e.name)) errs.push(field.notFound(ep.child('name'), e.name));
      if (e?.weight !== undefined && (typeof e.weight !== 'number' || e.weight < 0))
        errs.push(field.invalid(ep.child('weight'), e.weight, 'must not be negative'));
    });
    (set?.disabled ?? []).forEach((e, i) => {
      if (!e?.name) errs.push(field.required(p.child(k, 'disabled').index(i).child('name'), ''));
    });
  }
  return errs;
}

/** Reads, defaults and validates a configuration file; throws ConfigError naming each bad field. */
export function loadConfigFile(path: string, knownPlugins?: (n: string) => boolean): KubeSchedulerConfiguration {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(path, [`cannot read: ${(err as Error).message}`]);
  }
  let raw: unknown;
  try {
    raw = loadYaml(text);
  } catch (err) {
    throw new ConfigError(path, [`not valid YAML or JSON: ${(err as Error).message.split('\n')[0]}`]);
  }
  if (!isObj(raw)) throw new ConfigError(path, ['the configuration must be an object']);
  const c = applyDefaults(raw);
  const errs = validateConfiguration(c, knownPlugins);
  if (errs.length) throw new ConfigError(path, errs.map(fieldErrorToString));
  return c;
}
