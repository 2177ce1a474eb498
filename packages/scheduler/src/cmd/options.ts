/**
 * The scheduler's own options (Document 3 "Scheduler options"): `--config`, `--write-config-to`, and the
 * deprecated (D) options, which are applied to the default configuration without `--config` and ignored, with a
 * warning, when it is given (except `--algorithm-provider` and the policy options, which may overwrite it).
 */
import { type FlagDef, OptionGroupBase, boolFlag, floatFlag, intFlag, stringFlag } from '@platform/common';

/** The values of the scheduler's own flags. */
export interface SchedulerFlags {
  config: string;
  writeConfigTo: string;
  master: string;
  clientConfig: string;
  apiQps: number;
  apiBurst: number;
  apiContentType: string;
  schedulerName: string;
  algorithmProvider: string;
  policyConfigFile: string;
  policyConfigMap: string;
  policyConfigMapNamespace: string;
  useLegacyPolicyConfig: boolean;
  hardPodAffinitySymmetricWeight: number;
  lockObjectName: string;
  lockObjectNamespace: string;
  port: number;
  address: string;
  /** The (D) flags given on the command line. */
  deprecatedSet: string[];
}

export const ALGORITHM_PROVIDERS = ['DefaultProvider', 'ClusterAutoscalerProvider'];

/** The (D) options: ignored when --config is given. */
export const DEPRECATED_FLAGS = [
  'address',
  'algorithm-provider',
  'hard-pod-affinity-symmetric-weight',
  'api-burst',
  'api-content-type',
  'api-qps',
  'clientconfig',
  'lock-object-name',
  'lock-object-namespace',
  'policy-config-file',
  'policy-configmap',
  'policy-configmap-namespace',
  'port',
  'scheduler-name',
  'use-legacy-policy-config',
];

/** `--config`, `--write-config-to` and the deprecated scheduler flags. */
export class SchedulerOptions extends OptionGroupBase<{ scheduler?: SchedulerFlags }> {
  readonly f: SchedulerFlags = {
    config: '',
    writeConfigTo: '',
    master: '',
    clientConfig: '',
    apiQps: 50,
    apiBurst: 100,
    apiContentType: 'application/vnd.platform.protobuf',
    schedulerName: 'default-scheduler',
    algorithmProvider: '',
    policyConfigFile: '',
    policyConfigMap: '',
    policyConfigMapNamespace: 'system',
    useLegacyPolicyConfig: false,
    hardPodAffinitySymmetricWeight: 1,
    lockObjectName: 'scheduler',
    lockObjectNamespace: 'system',
    port: 10251,
    address: '0.0.0.0',
    deprecatedSet: [],
  };

  constructor() {
    super('Misc');
  }

  protected flagDefs(): FlagDef[] {
    const f = this.f;
    const dep =
      'This flag is deprecated and will be removed in a future version. It is ignored when --config is given.';
    return [
      stringFlag(
        'config',
        'The path to the configuration file. The following flags can overwrite fields in this file: --algorithm-provider, --policy-config-file, --policy-configmap, --policy-configmap-namespace.',
        f.config,
        (v) => (f.config = v),
      ),
      stringFlag(
        'write-config-to',
        'If set, write the configuration values to this file and exit.',
        f.writeConfigTo,
        (v) => (f.writeConfigTo = v),
      ),
      stringFlag(
        'master',
        'The address of the API server (overrides any value in the client configuration).',
        f.master,
        (v) => (f.master = v),
      ),
      stringFlag(
        'address',
        `DEPRECATED: the IP address on which to listen for the --port port (set to 0.0.0.0 or :: for listening in all interfaces and IP families). See --bind-address instead. ${dep}`,
        f.address,
        (v) => (f.address = v),
      ),
      stringFlag(
        'algorithm-provider',
        'DEPRECATED: the scheduling algorithm provider to use, this sets the default plugins for component config profiles. Choose one of: ClusterAutoscalerProvider | DefaultProvider',
        f.algorithmProvider,
        (v) => (f.algorithmProvider = v),
      ),
      intFlag(
        'hard-pod-affinity-symmetric-weight',
        `DEPRECATED: RequiredDuringScheduling affinity is not symmetric, but there is an implicit PreferredDuringScheduling affinity rule corresponding to every RequiredDuringScheduling affinity rule. --hard-pod-affinity-symmetric-weight represents the weight of implicit PreferredDuringScheduling affinity rule. Must be in the range 0-100. ${dep}`,
        f.hardPodAffinitySymmetricWeight,
        (v) => (f.hardPodAffinitySymmetricWeight = v),
        { type: 'int32' },
      ),
      intFlag(
        'api-burst',
        `DEPRECATED: burst to use while talking with the API server. ${dep}`,
        f.apiBurst,
        (v) => (f.apiBurst = v),
        { type: 'int32' },
      ),
      stringFlag(
        'api-content-type',
        `DEPRECATED: content type of requests sent to the API server. ${dep}`,
        f.apiContentType,
        (v) => (f.apiContentType = v),
      ),
      floatFlag(
        'api-qps',
        `DEPRECATED: QPS to use while talking with the API server. ${dep}`,
        f.apiQps,
        (v) => (f.apiQps = v),
      ),
      stringFlag(
        'clientconfig',
        `DEPRECATED: path to a client configuration file with authorization and master location information. ${dep}`,
        f.clientConfig,
        (v) => (f.clientConfig = v),
      ),
      stringFlag(
        'lock-object-name',
        'DEPRECATED: define the name of the lock object. Will be removed in favor of leader-elect-resource-name',
        f.lockObjectName,
        (v) => (f.lockObjectName = v),
      ),
      stringFlag(
        'lock-object-namespace',
        'DEPRECATED: define the namespace of the lock object. Will be removed in favor of leader-elect-resource-namespace.',
        f.lockObjectNamespace,
        (v) => (f.lockObjectNamespace = v),
      ),
      stringFlag(
        'policy-config-file',
        'DEPRECATED: file with scheduler policy configuration. This file is used if policy ConfigMap is not provided or --use-legacy-policy-config=true. Note: The scheduler will fail if this is combined with Plugin configs',
        f.policyConfigFile,
        (v) => (f.policyConfigFile = v),
      ),
      stringFlag(
        'policy-configmap',
        "DEPRECATED: name of the ConfigMap object that contains scheduler's policy configuration. It must exist in the system namespace before scheduler initialization if --use-legacy-policy-config=false. The config must be provided as the value of an element in 'Data' map with the key='policy.cfg'. Note: The scheduler will fail if this is combined with Plugin configs",
        f.policyConfigMap,
        (v) => (f.policyConfigMap = v),
      ),
      stringFlag(
        'policy-configmap-namespace',
        'DEPRECATED: the namespace where policy ConfigMap is located. The system namespace will be used if this is not provided or is empty. Note: The scheduler will fail if this is combined with Plugin configs',
        f.policyConfigMapNamespace,
        (v) => (f.policyConfigMapNamespace = v),
      ),
      intFlag(
        'port',
        `DEPRECATED: the port on which to serve HTTP insecurely without authentication and authorization. If 0, don't serve plain HTTP at all. See --secure-port instead. ${dep}`,
        f.port,
        (v) => (f.port = v),
      ),
      stringFlag(
        'scheduler-name',
        `DEPRECATED: name of the scheduler, used to select which pods will be processed by this scheduler, based on pod's "spec.schedulerName". ${dep}`,
        f.schedulerName,
        (v) => (f.schedulerName = v),
      ),
      boolFlag(
        'use-legacy-policy-config',
        'DEPRECATED: when set to true, scheduler will ignore policy ConfigMap and uses policy config file. Note: The scheduler will fail if this is combined with Plugin configs',
        f.useLegacyPolicyConfig,
        (v) => (f.useLegacyPolicyConfig = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    const f = this.f;
    const errs: Error[] = [];
    const w = f.hardPodAffinitySymmetricWeight;
    if (!(w >= 0 && w <= 100))
      errs.push(new Error(`--hard-pod-affinity-symmetric-weight: not in valid range [0-100], got ${w}`));
    if (f.algorithmProvider && !ALGORITHM_PROVIDERS.includes(f.algorithmProvider))
      errs.push(
        new Error(
          `--algorithm-provider: unknown provider ${JSON.stringify(f.algorithmProvider)}: choose one of ${ALGORITHM_PROVIDERS.join(', ')}`,
        ),
      );
    if (f.port < 0 || f.port > 65535) errs.push(new Error(`--port: ${f.port} must be between 0 and 65535, inclusive`));
    if (!(f.apiQps >= 0)) errs.push(new Error(`--api-qps must not be negative, got ${f.apiQps}`));
    if (f.apiContentType !== 'application/vnd.platform.protobuf' && f.apiContentType !== 'application/json')
      errs.push(new Error(`--api-content-type: unsupported content type ${JSON.stringify(f.apiContentType)}`));
    if (!f.config && !f.clientConfig && !f.master && !f.writeConfigTo)
      errs.push(
        new Error('one of --clientconfig, --master or --config (with clientConnection.kubeconfig) is required'),
      );
    return errs;
  }

  protected override extraWarnings(): string[] {
    if (!this.f.config) return [];
    return DEPRECATED_FLAGS.filter(
      (n) =>
        this.isSet(n) &&
        ![
          'algorithm-provider',
          'policy-config-file',
          'policy-configmap',
          'policy-configmap-namespace',
          'use-legacy-policy-config',
        ].includes(n),
    ).map((n) => `Flag --${n} is ignored because --config is given; set it in the configuration file instead`);
  }

  applyTo(config: { scheduler?: SchedulerFlags }): void {
    config.scheduler = { ...this.f, deprecatedSet: DEPRECATED_FLAGS.filter((n) => this.isSet(n)) };
  }
}
