/**
 * PodTolerationRestriction (model: Kubernetes 1.21 `plugin/pkg/admission/podtolerationrestriction`): a new pod's
 * tolerations are merged with its namespace's defaults (the `scheduler.alpha.kubernetes.io/defaultTolerations`
 * annotation, a JSON list, else the configured `default`); a conflicting toleration (same key and effect,
 * different operator, value or seconds) is refused. Every pod's tolerations must then be in the namespace's
 * allow-list (`scheduler.alpha.kubernetes.io/tolerationsWhitelist`, else the configured `whitelist`), when one is
 * set. Pods that are not BestEffort also tolerate `node.kubernetes.io/memory-pressure:NoSchedule`.
 */
import { type Namespace, type Pod, type Toleration } from '@platform/api';

import { type InternalClient } from '../internal-client';
import {
  type AdmissionAttributes,
  type AdmissionPlugin,
  admissionForbidden,
  type Operation,
  type PluginFactory,
} from '../interfaces';
import { isPod, mustGetNamespace } from './util';

export const NAME = 'PodTolerationRestriction';

export const DEFAULT_TOLERATIONS_ANNOTATION = 'scheduler.alpha.kubernetes.io/defaultTolerations';
export const TOLERATIONS_WHITELIST_ANNOTATION = 'scheduler.alpha.kubernetes.io/tolerationsWhitelist';
const MEMORY_PRESSURE_TAINT = 'node.kubernetes.io/memory-pressure';

/** The plugin configuration (`default` and `whitelist` tolerations of the cluster). */
export interface PodTolerationRestrictionConfig {
  default: Toleration[];
  whitelist: Toleration[];
}

function tolerationList(v: unknown, where: string): Toleration[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((t) => typeof t === 'object' && t !== null && !Array.isArray(t))) {
    throw new Error(`${where}: must be a list of tolerations`);
  }
  return v as Toleration[];
}

/** Reads the configuration (throws a clear Error when it is wrong). */
export function parsePodTolerationRestrictionConfig(raw: unknown): PodTolerationRestrictionConfig {
  if (raw === undefined || raw === null) return { default: [], whitelist: [] };
  if (typeof raw !== 'object') throw new Error(`${NAME}: the configuration must be an object`);
  const r = raw as Record<string, unknown>;
  return {
    default: tolerationList(r.default, `${NAME}: default`),
    whitelist: tolerationList(r.whitelist, `${NAME}: whitelist`),
  };
}

function same(a: Toleration, b: Toleration): boolean {
  return (
    (a.key ?? '') === (b.key ?? '') &&
    (a.operator ?? 'Equal') === (b.operator ?? 'Equal') &&
    (a.value ?? '') === (b.value ?? '') &&
    (a.effect ?? '') === (b.effect ?? '') &&
    (a.tolerationSeconds ?? null) === (b.tolerationSeconds ?? null)
  );
}

/** Merges `extra` into `base`; undefined when a toleration of the same key and effect differs. */
function merge(base: Toleration[], extra: Toleration[]): Toleration[] | undefined {
  const out = [...base];
  for (const t of extra) {
    const clash = out.find((o) => (o.key ?? '') === (t.key ?? '') && (o.effect ?? '') === (t.effect ?? ''));
    if (clash) {
      if (!same(clash, t)) return undefined;
      continue;
    }
    out.push(t);
  }
  return out;
}

/** Whether the allow-list covers `t` (a listed toleration of the same key, operator, value and effect). */
function allowed(t: Toleration, list: Toleration[]): boolean {
  return list.some(
    (w) =>
      (w.key ?? '') === (t.key ?? '') &&
      (w.operator ?? 'Equal') === (t.operator ?? 'Equal') &&
      (w.value ?? '') === (t.value ?? '') &&
      (!w.effect || w.effect === t.effect),
  );
}

function isBestEffort(pod: Pod): boolean {
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  return all.every((c) => {
    const r = c.resources as { requests?: object; limits?: object } | undefined;
    return Object.keys(r?.requests ?? {}).length === 0 && Object.keys(r?.limits ?? {}).length === 0;
  });
}

/** The PodTolerationRestriction plugin. */
export class PodTolerationRestrictionPlugin implements AdmissionPlugin {
  readonly name = NAME;
  constructor(
    private readonly client: InternalClient,
    private readonly config: PodTolerationRestrictionConfig,
  ) {}

  handles(op: Operation): boolean {
    return op === 'CREATE' || op === 'UPDATE';
  }

  private async namespaceList(a: AdmissionAttributes, key: string, fallback: Toleration[]): Promise<Toleration[]> {
    const ns = (await mustGetNamespace(this.client, a.namespace)) as Namespace;
    const text = ns.metadata?.annotations?.[key];
    if (text === undefined) return fallback;
    try {
      return tolerationList(JSON.parse(text), `annotation ${key}`);
    } catch (err) {
      throw admissionForbidden(a, `the namespace's ${key} annotation is not valid: ${(err as Error).message}`);
    }
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (!isPod(a) || !a.object) return;
    const pod = a.object as Pod;
    if (!pod.spec) return;
    let tolerations = pod.spec.tolerations ?? [];
    if (a.operation === 'CREATE') {
      const defaults = await this.namespaceList(a, DEFAULT_TOLERATIONS_ANNOTATION, this.config.default);
      const merged = merge(tolerations, defaults);
      if (!merged) {
        throw admissionForbidden(a, 'merging pod tolerations with namespace default tolerations: they conflict');
      }
      tolerations = merged;
    }
    if (!isBestEffort(pod) && !tolerations.some((t) => t.key === MEMORY_PRESSURE_TAINT && t.effect === 'NoSchedule')) {
      tolerations = [...tolerations, { key: MEMORY_PRESSURE_TAINT, operator: 'Exists', effect: 'NoSchedule' }];
    }
    pod.spec.tolerations = tolerations;
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isPod(a) || !a.object) return;
    const pod = a.object as Pod;
    const list = await this.namespaceList(a, TOLERATIONS_WHITELIST_ANNOTATION, this.config.whitelist);
    if (list.length === 0) return;
    for (const t of pod.spec?.tolerations ?? []) {
      // The tolerations other plugins add for every pod are not the pod's choice.
      if (
        t.key === MEMORY_PRESSURE_TAINT ||
        t.key === 'node.kubernetes.io/not-ready' ||
        t.key === 'node.kubernetes.io/unreachable'
      )
        continue;
      if (!allowed(t, list)) {
        throw admissionForbidden(
          a,
          'pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist',
        );
      }
    }
  }
}

export const factory: PluginFactory = (c) =>
  new PodTolerationRestrictionPlugin(c.client, parsePodTolerationRestrictionConfig(c.config));
