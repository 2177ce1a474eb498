/**
 * The admission plugins this server knows, their order, the default set, and how the options turn into a chain
 * (model: kube-apiserver `pkg/kubeapiserver/options/plugins.go` and apiserver `pkg/server/options/admission.go`).
 *
 * The chain always runs the enabled plugins in {@link ALL_ORDERED_PLUGINS}' order, whatever the order of the
 * options: `--enable-admission-plugins` adds to Document 2's default set, `--disable-admission-plugins` removes
 * from it, and a name that is not a known plugin stops the start with an error listing the known ones. Plugins
 * whose kinds this server does not serve yet are accepted and admit everything; the startup log says so.
 */
import { type Logger } from '@platform/common';

import { AdmissionChain } from './chain';
import { type PluginConfigs } from './config';
import { type AdmissionPlugin, type PluginFactory, type PluginInitContext } from './interfaces';
import * as alwaysAdmit from './plugins/always-admit';
import * as alwaysDeny from './plugins/always-deny';
import * as alwaysPullImages from './plugins/always-pull-images';
import * as defaultIngressClass from './plugins/default-ingress-class';
import * as defaultStorageClass from './plugins/default-storage-class';
import * as certificateApproval from './plugins/certificate-approval';
import * as certificateSigning from './plugins/certificate-signing';
import * as certificateSubjectRestriction from './plugins/certificate-subject-restriction';
import * as defaultTolerationSeconds from './plugins/default-toleration-seconds';
import * as denyServiceExternalIPs from './plugins/deny-service-external-ips';
import * as eventRateLimit from './plugins/event-rate-limit';
import * as extendedResourceToleration from './plugins/extended-resource-toleration';
import * as limitPodHardAntiAffinityTopology from './plugins/limit-pod-hard-anti-affinity-topology';
import * as limitRanger from './plugins/limit-ranger';
import * as namespaceAutoProvision from './plugins/namespace-autoprovision';
import * as namespaceExists from './plugins/namespace-exists';
import * as namespaceLifecycle from './plugins/namespace-lifecycle';
import * as persistentVolumeClaimResize from './plugins/persistent-volume-claim-resize';
import * as nodeRestriction from './plugins/node-restriction';
import * as podNodeSelector from './plugins/pod-node-selector';
import * as podTolerationRestriction from './plugins/pod-toleration-restriction';
import * as priority from './plugins/priority';
import * as resourceQuota from './plugins/resource-quota';
import * as runtimeClass from './plugins/runtime-class';
import * as securityContextDeny from './plugins/security-context-deny';
import * as serviceAccount from './plugins/service-account';
import * as storageObjectInUseProtection from './plugins/storage-object-in-use-protection';
import * as taintNodesByCondition from './plugins/taint-nodes-by-condition';
import { mutatingFactory, validatingFactory } from './webhook/plugin';

/** Every known plugin, in the order the chain runs them (Kubernetes 1.21's `AllOrderedPlugins`). */
export const ALL_ORDERED_PLUGINS = [
  'AlwaysAdmit',
  'NamespaceAutoProvision',
  'NamespaceLifecycle',
  'NamespaceExists',
  'SecurityContextDeny',
  'LimitPodHardAntiAffinityTopology',
  'LimitRanger',
  'ServiceAccount',
  'NodeRestriction',
  'TaintNodesByCondition',
  'AlwaysPullImages',
  'ImagePolicyWebhook',
  'PodSecurityPolicy',
  'PodNodeSelector',
  'Priority',
  'DefaultTolerationSeconds',
  'PodTolerationRestriction',
  'EventRateLimit',
  'ExtendedResourceToleration',
  'PersistentVolumeLabel',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'OwnerReferencesPermissionEnforcement',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'DenyServiceExternalIPs',
  // Webhooks, quota and deny go last.
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'AlwaysDeny',
] as const;

/** Document 2's default-enabled plugins. */
export const DEFAULT_ENABLED_PLUGINS: readonly string[] = [
  'NamespaceLifecycle',
  'LimitRanger',
  'ServiceAccount',
  'TaintNodesByCondition',
  'Priority',
  'DefaultTolerationSeconds',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
];

/** The implemented plugins. */
const FACTORIES: Record<string, PluginFactory> = {
  AlwaysAdmit: alwaysAdmit.factory,
  AlwaysDeny: alwaysDeny.factory,
  AlwaysPullImages: alwaysPullImages.factory,
  DefaultIngressClass: defaultIngressClass.factory,
  DefaultStorageClass: defaultStorageClass.factory,
  CertificateApproval: certificateApproval.factory,
  CertificateSigning: certificateSigning.factory,
  CertificateSubjectRestriction: certificateSubjectRestriction.factory,
  DefaultTolerationSeconds: defaultTolerationSeconds.factory,
  DenyServiceExternalIPs: denyServiceExternalIPs.factory,
  EventRateLimit: eventRateLimit.factory,
  ExtendedResourceToleration: extendedResourceToleration.factory,
  LimitPodHardAntiAffinityTopology: limitPodHardAntiAffinityTopology.factory,
  SecurityContextDeny: securityContextDeny.factory,
  LimitRanger: limitRanger.factory,
  NamespaceAutoProvision: namespaceAutoProvision.factory,
  NamespaceExists: namespaceExists.factory,
  NamespaceLifecycle: namespaceLifecycle.factory,
  NodeRestriction: nodeRestriction.factory,
  PersistentVolumeClaimResize: persistentVolumeClaimResize.factory,
  PodNodeSelector: podNodeSelector.factory,
  PodTolerationRestriction: podTolerationRestriction.factory,
  Priority: priority.factory,
  ResourceQuota: resourceQuota.factory,
  RuntimeClass: runtimeClass.factory,
  ServiceAccount: serviceAccount.factory,
  StorageObjectInUseProtection: storageObjectInUseProtection.factory,
  TaintNodesByCondition: taintNodesByCondition.factory,
  MutatingAdmissionWebhook: mutatingFactory,
  ValidatingAdmissionWebhook: validatingFactory,
};

/** Why a known plugin is not implemented: what it needs that this server does not have yet. */
export const NOT_IMPLEMENTED: Record<string, string> = {
  ImagePolicyWebhook: 'not implemented yet (needs its webhook configuration and ImageReview)',
  PodSecurityPolicy: 'the kind PodSecurityPolicy (policy/v1beta1) does not exist yet',
  PersistentVolumeLabel: 'no cloud provider labels volumes',
  OwnerReferencesPermissionEnforcement: 'not implemented yet',
};

const KNOWN = new Set<string>(ALL_ORDERED_PLUGINS);

/**
 * The enabled plugins, in chain order: the defaults plus `enable`, minus `disable`. Throws an Error naming every
 * unknown plugin (and the known ones).
 */
export function enabledPlugins(enable: readonly string[], disable: readonly string[]): string[] {
  const unknown = [...enable, ...disable].filter((n) => !KNOWN.has(n));
  if (unknown.length) {
    throw new Error(
      `unknown admission plugin${unknown.length > 1 ? 's' : ''}: ${[...new Set(unknown)].join(', ')}; known plugins: ${ALL_ORDERED_PLUGINS.join(', ')}`,
    );
  }
  const both = enable.filter((n) => disable.includes(n));
  if (both.length) {
    throw new Error(`admission plugins both enabled and disabled: ${[...new Set(both)].join(', ')}`);
  }
  const on = new Set([...DEFAULT_ENABLED_PLUGINS, ...enable]);
  for (const n of disable) on.delete(n);
  return ALL_ORDERED_PLUGINS.filter((n) => on.has(n));
}

/** What building a chain needs besides the per-plugin init context. */
export interface ChainOptions {
  /** Enabled plugin names (see {@link enabledPlugins}). */
  plugins: readonly string[];
  /** Per-plugin configuration from `--admission-control-config-file`. */
  configs?: PluginConfigs;
  logger: Logger;
}

/** Builds the chain; throws an Error naming the plugin whose configuration is wrong. */
export function buildAdmissionChain(o: ChainOptions, init: Omit<PluginInitContext, 'config'>): AdmissionChain {
  const plugins: AdmissionPlugin[] = [];
  for (const [name] of o.configs ?? new Map<string, unknown>()) {
    if (!KNOWN.has(name)) throw new Error(`admission configuration names an unknown plugin: ${name}`);
  }
  for (const name of o.plugins) {
    const factory = FACTORIES[name];
    if (!factory) {
      o.logger.warn('Admission plugin enabled but inactive: it admits everything', {
        plugin: name,
        reason: NOT_IMPLEMENTED[name] ?? 'not implemented yet',
      });
      continue;
    }
    try {
      plugins.push(factory({ ...init, config: o.configs?.get(name) }));
    } catch (err) {
      throw new Error(`admission plugin ${name}: ${(err as Error).message}`);
    }
  }
  o.logger.info('Loaded admission plugins', {
    mutating: plugins.filter((p) => p.admit).map((p) => p.name),
    validating: plugins.filter((p) => p.validate).map((p) => p.name),
  });
  return new AdmissionChain(plugins);
}
