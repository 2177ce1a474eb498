/**
 * The effective configuration of a run: the file given with `--config` (defaulted and validated), or the
 * defaults with the (D) flags applied; then `--algorithm-provider` and the legacy policy, which may overwrite
 * either. Also turns the configuration into the scheduler's profiles.
 */
import { type LeaderElectionConfig } from '@platform/common';

import { type ProfilePlugins } from '../framework/framework';
import { type Registry } from '../framework/registry';
import { type Profile } from '../scheduler';
import { type SchedulerFlags } from '../cmd/options';
import {
  ConfigError,
  defaultConfiguration,
  extenderConfigsOf,
  type KubeSchedulerConfiguration,
  loadConfigFile,
  parseDurationMs,
} from './config';
import { clusterAutoscalerPlugins, defaultPlugins } from './defaults';
import { type Policy, policyToPlugins } from './policy';
import { resolveProfile } from './profile';

function durationText(ms: number): string {
  if (ms % 60_000 === 0 && ms >= 60_000) return `${ms / 60_000}m0s`;
  return `${ms / 1000}s`;
}

/** What a run is configured with. */
export interface Effective {
  config: KubeSchedulerConfiguration;
  /** The algorithm provider's defaults (the policy's plugins when a policy is used). */
  base: ProfilePlugins;
  hardPodAffinitySymmetricWeight: number;
  /** Warnings to log. */
  warnings: string[];
}

/** The configuration from flags and file; throws ConfigError. `policy` is the legacy policy, already read. */
export function buildConfiguration(
  f: SchedulerFlags,
  le: LeaderElectionConfig,
  registry: Registry,
  policy?: Policy,
): Effective {
  const known = (n: string): boolean => registry.get(n) !== undefined;
  const warnings: string[] = [];
  let config: KubeSchedulerConfiguration;
  let hard = 1;
  if (f.config) {
    config = loadConfigFile(f.config, known);
    for (const p of config.profiles) {
      const w = (p.pluginConfig ?? []).find((c) => c.name === 'InterPodAffinity')?.args as
        { hardPodAffinityWeight?: number } | undefined;
      if (w?.hardPodAffinityWeight !== undefined) hard = w.hardPodAffinityWeight;
    }
  } else {
    config = defaultConfiguration();
    config.clientConnection = {
      ...config.clientConnection,
      kubeconfig: f.clientConfig,
      qps: f.apiQps,
      burst: f.apiBurst,
      contentType: f.apiContentType,
    };
    config.profiles = [{ schedulerName: f.schedulerName }];
    hard = f.hardPodAffinitySymmetricWeight;
    if (hard !== 1)
      config.profiles[0]!.pluginConfig = [{ name: 'InterPodAffinity', args: { hardPodAffinityWeight: hard } }];
    const lockName = f.deprecatedSet.includes('lock-object-name') ? f.lockObjectName : le.resourceName;
    const lockNs = f.deprecatedSet.includes('lock-object-namespace') ? f.lockObjectNamespace : le.resourceNamespace;
    config.leaderElection = {
      leaderElect: le.leaderElect,
      leaseDuration: durationText(le.leaseDurationMs),
      renewDeadline: durationText(le.renewDeadlineMs),
      retryPeriod: durationText(le.retryPeriodMs),
      resourceLock: le.resourceLock,
      resourceName: lockName,
      resourceNamespace: lockNs,
    };
    const addr = f.port === 0 ? '' : `${f.address.includes(':') ? `[${f.address}]` : f.address}:${f.port}`;
    config.healthzBindAddress = addr;
    config.metricsBindAddress = addr;
  }
  let base = f.algorithmProvider === 'ClusterAutoscalerProvider' ? clusterAutoscalerPlugins() : defaultPlugins();
  if (policy || f.policyConfigFile || f.policyConfigMap || f.useLegacyPolicyConfig) {
    const custom = config.profiles.findIndex(
      (p) => p.plugins !== undefined || (p.pluginConfig ?? []).some((c) => c.name !== 'InterPodAffinity'),
    );
    if (custom >= 0)
      throw new ConfigError(f.config, [
        `profiles[${custom}]: when using the legacy policy (--policy-config-file, --policy-configmap, --use-legacy-policy-config), profiles can't have plugins or pluginConfig`,
      ]);
    if (policy) {
      base = policyToPlugins(policy);
      if (policy.hardPodAffinitySymmetricWeight !== undefined) hard = policy.hardPodAffinitySymmetricWeight;
      if (config.profiles.length !== 1)
        throw new ConfigError(f.config, ['profiles: when using the legacy policy, exactly one profile is allowed']);
    }
  }
  return { config, base, hardPodAffinitySymmetricWeight: hard, warnings };
}

/** The scheduler's profiles from the effective configuration. */
export function profilesOf(e: Effective, registry: Registry): Profile[] {
  return e.config.profiles.map((p) => {
    const prof = resolveProfile(p, e.base);
    if (e.hardPodAffinitySymmetricWeight !== 1 && !prof.pluginConfig.has('InterPodAffinity'))
      prof.pluginConfig.set('InterPodAffinity', { hardPodAffinityWeight: e.hardPodAffinitySymmetricWeight });
    // Resources an extender manages and the scheduler ignores (1.21: they take precedence over the plugin args).
    const ignored = extenderConfigsOf(e.config).flatMap((x) =>
      (x.managedResources ?? []).filter((r) => r.ignoredByScheduler).map((r) => r.name),
    );
    if (ignored.length) {
      const fit = (prof.pluginConfig.get('NodeResourcesFit') ?? {}) as Record<string, unknown>;
      prof.pluginConfig.set('NodeResourcesFit', { ...fit, ignoredResources: ignored });
    }
    for (const point of Object.values(prof.plugins))
      for (const r of point)
        if (!registry.get(r.name))
          throw new ConfigError('', [`profile ${prof.schedulerName}: plugin "${r.name}" does not exist`]);
    return prof;
  });
}

/** The leader election settings of the configuration, in ms. */
export function leaderElectionOf(c: KubeSchedulerConfiguration): LeaderElectionConfig {
  const l = c.leaderElection;
  return {
    leaderElect: l.leaderElect,
    leaseDurationMs: parseDurationMs(l.leaseDuration),
    renewDeadlineMs: parseDurationMs(l.renewDeadline),
    retryPeriodMs: parseDurationMs(l.retryPeriod),
    resourceLock: l.resourceLock,
    resourceName: l.resourceName,
    resourceNamespace: l.resourceNamespace,
  };
}
