/**
 * The feature gate lists of the specification: Document 2 (API server, controller manager, scheduler) and
 * Document 3 (node agent). Each gate has a stage (alpha or beta) and a default. Written as the spec lists them
 * (`Name stage default`) and parsed once at load.
 */

/** Maturity of a gate. `GA` gates are locked to true (none are listed by the specification today). */
export type FeatureStage = 'ALPHA' | 'BETA' | 'GA';

/** One gate: its stage and its default. */
export interface FeatureSpec {
  readonly stage: FeatureStage;
  readonly default: boolean;
}

function parseList(list: string): ReadonlyMap<string, FeatureSpec> {
  const out = new Map<string, FeatureSpec>();
  for (const item of list.split(';')) {
    const parts = item.trim().split(/\s+/);
    if (parts.length !== 3) throw new Error(`bad feature list entry ${JSON.stringify(item)}`);
    const [name, stage, def] = parts as [string, string, string];
    out.set(name, { stage: stage === 'A' ? 'ALPHA' : 'BETA', default: def === 't' });
  }
  return out;
}

/** Gates accepted by the API server, the controller manager and the scheduler (Document 2). */
export const CONTROL_PLANE_FEATURES: ReadonlyMap<string, FeatureSpec> = parseList(
  'APIListChunking B t; APIPriorityAndFairness B t; APIResponseCompression B t; APIServerIdentity A f; AllAlpha A f; AllBeta B f; AnyVolumeDataSource A f; AppArmor B t; BalanceAttachedNodeVolumes A f; BoundServiceAccountTokenVolume B t; CPUManager B t; CSIInlineVolume B t; CSIMigration B t; CSIMigrationCloudA B f; CSIMigrationCloudBDisk B f; CSIMigrationCloudBFile B f; CSIMigrationCloudC B f; CSIMigrationCloudD B t; CSIMigrationCloudE B f; CSIMigrationCloudEComplete B f; CSIServiceAccountToken B t; CSIStorageCapacity B t; CSIVolumeFSGroupPolicy B t; CSIVolumeHealth A f; ConfigurableFSGroupPolicy B t; ControllerManagerLeaderMigration A f; CronJobControllerV2 B t; CustomCPUCFSQuotaPeriod A f; DaemonSetUpdateSurge A f; DefaultPodTopologySpread B t; DevicePlugins B t; DisableAcceleratorUsageMetrics B t; DownwardAPIHugePages B f; DynamicAgentConfig B t; EfficientWatchResumption B t; EndpointSliceProxying B t; EndpointSliceTerminatingCondition A f; EphemeralContainers A f; ExpandCSIVolumes B t; ExpandInUsePersistentVolumes B t; ExpandPersistentVolumes B t; ExperimentalHostUserNamespaceDefaulting B f; GenericEphemeralVolume B t; GracefulNodeShutdown B t; HPAContainerMetrics A f; HPAScaleToZero A f; HugePageStorageMediumSize B t; IPv6DualStack B t; InTreePluginCloudAUnregister A f; InTreePluginCloudBDiskUnregister A f; InTreePluginCloudBFileUnregister A f; InTreePluginCloudCUnregister A f; InTreePluginCloudDUnregister A f; InTreePluginCloudEUnregister A f; IndexedJob A f; IngressClassNamespacedParams A f; AgentCredentialProviders A f; AgentPodResources B t; AgentPodResourcesGetAllocatable A f; LocalStorageCapacityIsolation B t; LocalStorageCapacityIsolationFSQuotaMonitoring A f; LogarithmicScaleDown A f; MemoryManager A f; MixedProtocolLBService A f; NamespaceDefaultLabelName B t; NetworkPolicyEndPort A f; NonPreemptingPriority B t; PodAffinityNamespaceSelector A f; PodDeletionCost A f; PodOverhead B t; PreferNominatedNode A f; ProbeTerminationGracePeriod A f; ProcMountType A f; QOSReserved A f; RemainingItemCount B t; RemoveSelfLink B t; RotateAgentServerCertificate B t; ServerSideApply B t; ServiceInternalTrafficPolicy A f; ServiceLBNodePortControl A f; ServiceLoadBalancerClass A f; ServiceTopology A f; SetHostnameAsFQDN B t; SizeMemoryBackedVolumes A f; StorageVersionAPI A f; StorageVersionHash B t; SuspendJob A f; TTLAfterFinished B t; TopologyAwareHints A f; TopologyManager B t; ValidateProxyRedirects B t; VolumeCapacityPriority A f; WarningHeaders B t; WinDSR A f; WinOverlay B t; WinEndpointSliceProxying B t',
);

/** Gates accepted by the node agent (Document 3). */
export const NODE_AGENT_FEATURES: ReadonlyMap<string, FeatureSpec> = parseList(
  'APIListChunking B t; APIPriorityAndFairness B t; APIResponseCompression B t; APIServerIdentity A f; AllAlpha A f; AllBeta B f; AllowInsecureBackendProxy B t; AnyVolumeDataSource A f; AppArmor B t; BalanceAttachedNodeVolumes A f; BoundServiceAccountTokenVolume A f; CPUManager B t; CSIInlineVolume B t; CSIMigration B t; CSIMigrationCloudA B f; CSIMigrationCloudAComplete A f; CSIMigrationCloudBDisk B f; CSIMigrationCloudBDiskComplete A f; CSIMigrationCloudBFile A f; CSIMigrationCloudBFileComplete A f; CSIMigrationCloudC B f; CSIMigrationCloudCComplete A f; CSIMigrationCloudD B f; CSIMigrationCloudDComplete A f; CSIMigrationCloudE B f; CSIMigrationCloudEComplete B f; CSIServiceAccountToken A f; CSIStorageCapacity A f; CSIVolumeFSGroupPolicy B t; ConfigurableFSGroupPolicy B t; CronJobControllerV2 A f; CustomCPUCFSQuotaPeriod A f; DefaultPodTopologySpread B t; DevicePlugins B t; DisableAcceleratorUsageMetrics B t; DownwardAPIHugePages A f; DynamicAgentConfig B t; EfficientWatchResumption A f; EndpointSlice B t; EndpointSliceNodeName A f; EndpointSliceProxying B t; EndpointSliceTerminatingCondition A f; EphemeralContainers A f; ExpandCSIVolumes B t; ExpandInUsePersistentVolumes B t; ExpandPersistentVolumes B t; ExperimentalHostUserNamespaceDefaulting B f; GenericEphemeralVolume A f; GracefulNodeShutdown A f; HPAContainerMetrics A f; HPAScaleToZero A f; HugePageStorageMediumSize B t; IPv6DualStack A f; ImmutableEphemeralVolumes B t; AgentCredentialProviders A f; AgentPodResources B t; LegacyNodeRoleBehavior B t; LocalStorageCapacityIsolation B t; LocalStorageCapacityIsolationFSQuotaMonitoring A f; MixedProtocolLBService A f; NodeDisruptionExclusion B t; NonPreemptingPriority B t; PodDisruptionBudget B t; PodOverhead B t; ProcMountType A f; QOSReserved A f; RemainingItemCount B t; RemoveSelfLink B t; RootCAConfigMap B t; RotateAgentServerCertificate B t; RunAsGroup B t; ServerSideApply B t; ServiceAccountIssuerDiscovery B t; ServiceLBNodePortControl A f; ServiceNodeExclusion B t; ServiceTopology A f; SetHostnameAsFQDN B t; SizeMemoryBackedVolumes A f; StorageVersionAPI A f; StorageVersionHash B t; Sysctls B t; TTLAfterFinished A f; TopologyManager B t; ValidateProxyRedirects B t; WarningHeaders B t; WinDSR A f; WinOverlay B t; WinEndpointSliceProxying A f',
);
