/**
 * PodNodeSelector (model: Kubernetes 1.21 `plugin/pkg/admission/podnodeselector`): a new pod's node selector is
 * merged with its namespace's (the `scheduler.alpha.kubernetes.io/node-selector` annotation, else the configured
 * cluster default); a conflict is refused, and so is a selector outside the namespace's allow-list from the
 * configuration. Configuration (file):
 * `podNodeSelectorPluginConfig: { clusterDefaultNodeSelector: "k=v", <namespace>: "k=v,..." }`.
 */
import { type Namespace, type Pod } from '@platform/api';

import { type InternalClient } from '../internal-client';
import {
  type AdmissionAttributes,
  type AdmissionPlugin,
  admissionForbidden,
  type Operation,
  type PluginFactory,
} from '../interfaces';
import { isPod, mustGetNamespace } from './util';

export const NAME = 'PodNodeSelector';

/** The namespace annotation holding the namespace's node selector. */
export const NODE_SELECTOR_ANNOTATION = 'scheduler.alpha.kubernetes.io/node-selector';

/** Parses `k=v,k2=v2` (the only form a node selector annotation may take). */
export function parseSelectorMap(text: string, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(',').map((s) => s.trim())) {
    if (!part) continue;
    const m = /^([^=!\s]+)\s*==?\s*([^=\s]*)$/.exec(part);
    if (!m) throw new Error(`${what}: ${JSON.stringify(text)} is not a list of key=value pairs`);
    out[m[1] as string] = m[2] as string;
  }
  return out;
}

/** The plugin configuration. */
export interface PodNodeSelectorConfig {
  clusterDefaultNodeSelector: string;
  /** Namespace → allowed selector. */
  whitelists: Record<string, Record<string, string>>;
}

/** Reads the configuration (throws a clear Error when it is wrong). */
export function parsePodNodeSelectorConfig(raw: unknown): PodNodeSelectorConfig {
  const config: PodNodeSelectorConfig = { clusterDefaultNodeSelector: '', whitelists: {} };
  if (raw === undefined || raw === null) return config;
  const body = (raw as { podNodeSelectorPluginConfig?: unknown }).podNodeSelectorPluginConfig;
  if (typeof body !== 'object' || body === null) {
    throw new Error(`${NAME}: the configuration must have a podNodeSelectorPluginConfig map`);
  }
  for (const [k, v] of Object.entries(body)) {
    if (typeof v !== 'string') throw new Error(`${NAME}: podNodeSelectorPluginConfig.${k} must be a string`);
    if (k === 'clusterDefaultNodeSelector') {
      parseSelectorMap(v, `${NAME}: clusterDefaultNodeSelector`);
      config.clusterDefaultNodeSelector = v;
    } else config.whitelists[k] = parseSelectorMap(v, `${NAME}: podNodeSelectorPluginConfig.${k}`);
  }
  return config;
}

/** The PodNodeSelector plugin. */
export class PodNodeSelectorPlugin implements AdmissionPlugin {
  readonly name = NAME;
  constructor(
    private readonly client: InternalClient,
    private readonly config: PodNodeSelectorConfig,
  ) {}

  handles(op: Operation): boolean {
    return op === 'CREATE';
  }

  private async namespaceSelector(a: AdmissionAttributes): Promise<Record<string, string>> {
    const ns = (await mustGetNamespace(this.client, a.namespace)) as Namespace;
    const text = ns.metadata?.annotations?.[NODE_SELECTOR_ANNOTATION] ?? this.config.clusterDefaultNodeSelector;
    try {
      return parseSelectorMap(text, 'namespace node selector');
    } catch (err) {
      throw admissionForbidden(a, (err as Error).message);
    }
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (!isPod(a) || !a.object) return;
    const pod = a.object as Pod;
    if (!pod.spec) return;
    const nsSelector = await this.namespaceSelector(a);
    const selector = (pod.spec.nodeSelector ??= {});
    for (const [k, v] of Object.entries(nsSelector)) {
      if (k in selector && selector[k] !== v) {
        throw admissionForbidden(a, 'pod node label selector conflicts with its namespace node label selector');
      }
      selector[k] = v;
    }
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isPod(a) || !a.object) return;
    const pod = a.object as Pod;
    const nsSelector = await this.namespaceSelector(a);
    const selector = pod.spec?.nodeSelector ?? {};
    for (const [k, v] of Object.entries(nsSelector)) {
      if (selector[k] !== v) {
        throw admissionForbidden(a, 'pod node label selector conflicts with its namespace node label selector');
      }
    }
    const allow = this.config.whitelists[a.namespace];
    if (!allow) return;
    for (const [k, v] of Object.entries(selector)) {
      if (allow[k] !== v)
        throw admissionForbidden(a, 'pod node label selector labels conflict with its namespace whitelist');
    }
  }
}

export const factory: PluginFactory = (c) => new PodNodeSelectorPlugin(c.client, parsePodNodeSelectorConfig(c.config));
