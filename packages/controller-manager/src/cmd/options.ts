/**
 * The controller manager's own option families (Document 2, "Controller manager options"): which controllers run
 * (`--controllers`), how informers resync, how controllers are started and whose credentials they use, leader
 * migration; and the options of controllers this process does not run yet, accepted so that command lines written
 * for Kubernetes keep working (each one given is reported at startup as having no effect).
 */

import {
  boolFlag,
  cidrFlag,
  durationFlag,
  type FlagDef,
  floatFlag,
  INT32,
  intFlag,
  OptionGroupBase,
  stringFlag,
  stringsFlag,
} from '@platform/common';

/** Every controller name of Kubernetes 1.21's controller manager (Document 2). */
export const KNOWN_CONTROLLERS = [
  'attachdetach',
  'bootstrapsigner',
  'cloud-node-lifecycle',
  'clusterrole-aggregation',
  'cronjob',
  'csrapproving',
  'csrcleaner',
  'csrsigning',
  'daemonset',
  'deployment',
  'disruption',
  'endpoint',
  'endpointslice',
  'endpointslicemirroring',
  'ephemeral-volume',
  'garbagecollector',
  'horizontalpodautoscaling',
  'job',
  'namespace',
  'nodeipam',
  'nodelifecycle',
  'persistentvolume-binder',
  'persistentvolume-expander',
  'podgc',
  'pv-protection',
  'pvc-protection',
  'replicaset',
  'replicationcontroller',
  'resourcequota',
  'root-ca-cert-publisher',
  'route',
  'service',
  'serviceaccount',
  'serviceaccount-token',
  'statefulset',
  'tokencleaner',
  'ttl',
  'ttl-after-finished',
] as const;

/** Off unless named (`*` does not include them). */
export const DISABLED_BY_DEFAULT = new Set(['bootstrapsigner', 'tokencleaner']);

/** The daemon's settings from {@link GenericControllerManagerOptions}. */
export interface GenericControllerManagerConfig {
  controllers: string[];
  minResyncPeriodMs: number;
  controllerStartIntervalMs: number;
  useServiceAccountCredentials: boolean;
  enableLeaderMigration: boolean;
  leaderMigrationConfig: string;
}

/**
 * Whether `--controllers` enables `name` (model: `IsControllerEnabled`): an explicit `-name` disables, an explicit
 * `name` enables, otherwise `*` enables the default-on ones.
 */
export function isControllerEnabled(name: string, controllers: readonly string[], enabledByDefault: boolean): boolean {
  let star = false;
  for (const c of controllers) {
    if (c === name) return true;
    if (c === `-${name}`) return false;
    if (c === '*') star = true;
  }
  return star && enabledByDefault;
}

/** `--controllers`, `--min-resync-period`, `--controller-start-interval`, `--use-service-account-credentials`, leader migration. */
export class GenericControllerManagerOptions extends OptionGroupBase<{ generic?: GenericControllerManagerConfig }> {
  readonly config: GenericControllerManagerConfig = {
    controllers: ['*'],
    minResyncPeriodMs: 12 * 3600_000,
    controllerStartIntervalMs: 0,
    useServiceAccountCredentials: false,
    enableLeaderMigration: false,
    leaderMigrationConfig: '',
  };

  constructor() {
    super('Generic');
  }

  protected flagDefs(): FlagDef[] {
    const c = this.config;
    return [
      stringsFlag(
        'controllers',
        `A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller named 'foo', '-foo' disables the controller named 'foo'.\nAll controllers: ${KNOWN_CONTROLLERS.join(', ')}\nDisabled-by-default controllers: ${[...DISABLED_BY_DEFAULT].join(', ')}`,
        c.controllers,
        (v) => (c.controllers = v),
      ),
      durationFlag(
        'min-resync-period',
        'The resync period in reflectors will be random between MinResyncPeriod and 2*MinResyncPeriod.',
        c.minResyncPeriodMs,
        (v) => (c.minResyncPeriodMs = v),
      ),
      durationFlag(
        'controller-start-interval',
        'Interval between starting controller managers.',
        c.controllerStartIntervalMs,
        (v) => (c.controllerStartIntervalMs = v),
        { defaultText: '' },
      ),
      boolFlag(
        'use-service-account-credentials',
        'If true, use individual service account credentials for each controller.',
        c.useServiceAccountCredentials,
        (v) => (c.useServiceAccountCredentials = v),
      ),
      boolFlag(
        'enable-leader-migration',
        'Whether to enable controller leader migration.',
        c.enableLeaderMigration,
        (v) => (c.enableLeaderMigration = v),
      ),
      stringFlag(
        'leader-migration-config',
        'Path to the config file for controller leader migration, or empty to use the value that reflects default configuration of the controller manager. The config file should be of type LeaderMigrationConfiguration, group controllermanager.config.platform, version v1alpha1.',
        c.leaderMigrationConfig,
        (v) => (c.leaderMigrationConfig = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    const c = this.config;
    const errs: Error[] = [];
    const known = new Set<string>(KNOWN_CONTROLLERS);
    for (const name of c.controllers) {
      if (name === '*') continue;
      const bare = name.startsWith('-') ? name.slice(1) : name;
      if (!known.has(bare))
        errs.push(new Error(`--controllers: ${JSON.stringify(bare)} is not in the list of known controllers`));
    }
    // --enable-leader-migration and --leader-migration-config are checked with the feature gates, once every
    // family is parsed (validateLeaderMigrationOptions in leader-migration.ts).
    return errs;
  }

  applyTo(config: { generic?: GenericControllerManagerConfig }): void {
    config.generic = structuredClone(this.config);
  }
}

type Inert = [
  name: string,
  type: 'bool' | 'string' | 'duration' | 'int32' | 'float' | 'cidr' | 'strings',
  dflt: string,
  usage: string,
];

/** Document 2's options of controllers not run by this process (yet): accepted, validated by type, no effect. */
const INERT: Inert[] = [
  ['cluster-name', 'string', 'platform', 'The instance prefix for the cluster.'],
  [
    'configure-cloud-routes',
    'bool',
    'true',
    'Should CIDRs allocated by allocate-node-cidrs be configured on the cloud provider.',
  ],
  ['external-cloud-volume-plugin', 'string', '', 'The plugin to use when cloud provider is set to external.'],
  [
    'flex-volume-plugin-dir',
    'string',
    '/usr/libexec/platform/agent-plugins/volume/exec/',
    'Full path of the directory in which the flex volume plugin should search for additional third party volume plugins.',
  ],
  ['namespace-sync-period', 'duration', '5m0s', 'The period for syncing namespace life-cycle updates.'],
  ['resource-quota-sync-period', 'duration', '5m0s', 'The period for syncing quota usage status in the system.'],
  [
    'route-reconciliation-period',
    'duration',
    '10s',
    'The period for reconciling routes created for Nodes by cloud provider.',
  ],
  [
    'terminated-pod-gc-threshold',
    'int32',
    '12500',
    'Number of terminated pods that can exist before the terminated pod garbage collector starts deleting terminated pods. If <= 0, the terminated pod garbage collector is disabled.',
  ],
  [
    'volume-host-allow-local-loopback',
    'bool',
    'true',
    'If false, deny local loopback IPs in addition to any CIDR ranges in --volume-host-cidr-denylist.',
  ],
  ['volume-host-cidr-denylist', 'strings', '', 'A comma-separated list of CIDR ranges to avoid from volume plugins.'],
  [
    'enable-garbage-collector',
    'bool',
    'true',
    'Enables the generic garbage collector. MUST be synced with the corresponding flag of the apiserver.',
  ],
  [
    'concurrent-gc-syncs',
    'int32',
    '20',
    'The number of garbage collector workers that are allowed to sync concurrently.',
  ],
  [
    'concurrent-namespace-syncs',
    'int32',
    '10',
    'The number of namespace objects that are allowed to sync concurrently.',
  ],
  [
    'concurrent-resource-quota-syncs',
    'int32',
    '5',
    'The number of resource quotas that are allowed to sync concurrently.',
  ],
  [
    'concurrent-statefulset-syncs',
    'int32',
    '5',
    'The number of statefulset objects that are allowed to sync concurrently.',
  ],
  [
    'concurrent-ttl-after-finished-syncs',
    'int32',
    '5',
    'The number of TTL-after-finished controller workers that are allowed to sync concurrently.',
  ],
];

/**
 * Options of controllers this process does not run: accepted (and type-checked) so that Kubernetes command lines
 * work; those given are reported at startup. Flags that a running controller's own family defines are skipped.
 */
export class InertControllerOptions extends OptionGroupBase<{ inert?: string[] }> {
  private readonly given = new Set<string>();

  constructor(private readonly taken: ReadonlySet<string>) {
    super('Other controllers (not run by this controller manager yet)');
  }

  protected flagDefs(): FlagDef[] {
    const defs: FlagDef[] = [];
    for (const [name, type, dflt, usage] of INERT) {
      if (this.taken.has(name)) continue;
      const mark = (): void => void this.given.add(name);
      switch (type) {
        case 'bool':
          defs.push(boolFlag(name, usage, dflt === 'true', mark));
          break;
        case 'duration':
          defs.push(durationFlag(name, usage, undefined, mark, { defaultText: dflt }));
          break;
        case 'int32':
          defs.push(
            intFlag(name, usage, dflt === '' ? undefined : Number(dflt), mark, { range: INT32, type: 'int32' }),
          );
          break;
        case 'float':
          defs.push(floatFlag(name, usage, Number(dflt), mark));
          break;
        case 'cidr':
          defs.push(cidrFlag(name, usage, dflt, mark));
          break;
        case 'strings':
          defs.push(stringsFlag(name, usage, [], mark));
          break;
        default:
          defs.push(stringFlag(name, usage, dflt, mark));
      }
    }
    return defs;
  }

  applyTo(config: { inert?: string[] }): void {
    config.inert = [...this.given].map((n) => `--${n}`);
  }
}

/** The flag names of every family registered so far on a command (to skip them in {@link InertControllerOptions}). */
export function flagNamesOf(cmd: { options: readonly { long?: string }[] }): Set<string> {
  return new Set(cmd.options.map((o) => (o.long ?? '').replace(/^--/, '')).filter((n) => n !== ''));
}
