/**
 * `--enable-leader-migration` and `--leader-migration-config` (model: Kubernetes 1.21
 * `cmd/controller-manager/app/options/leadermigration.go` and `controller-manager/config/v1alpha1`): the
 * LeaderMigrationConfiguration file is read, defaulted and validated as 1.21 does, so a bad file is a clear startup
 * error naming the option and the field.
 */
import { existsSync, readFileSync } from 'node:fs';

import { parseYamlDocument } from '@platform/client';

/** The group/version of the file (1.21's `controllermanager.config.k8s.io/v1alpha1`, renamed). */
export const LEADER_MIGRATION_API_VERSION = 'controllermanager.config.platform/v1alpha1';
/** The feature gate 1.21 requires for leader migration (alpha, off by default). */
export const LEADER_MIGRATION_FEATURE = 'ControllerManagerLeaderMigration';

/** A controller and the component that runs it during the migration. */
export interface ControllerLeaderConfiguration {
  name: string;
  component: string;
}

/** The content of the file (1.21's `LeaderMigrationConfiguration`). */
export interface LeaderMigrationConfiguration {
  /** The lock the migrating controllers are elected on. */
  leaderName: string;
  /** `leases` (the default) or `endpoints`. */
  resourceLock: string;
  controllerLeaders: ControllerLeaderConfiguration[];
}

/** 1.21's `DefaultLeaderMigrationConfiguration`: used when leader migration is on without a file. */
export function defaultLeaderMigrationConfiguration(): LeaderMigrationConfiguration {
  return {
    leaderName: 'cloud-provider-extraction-migration',
    resourceLock: 'leases',
    controllerLeaders: ['route', 'service', 'cloud-node-lifecycle'].map((name) => ({
      name,
      component: 'platform-controller-manager',
    })),
  };
}

const FLAG = '--leader-migration-config';

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/**
 * Decodes the file's document: apiVersion and kind must be the file's, `resourceLock` defaults to `leases`.
 * Returns the configuration or the problems (each naming the option, the file and the field).
 */
export function decodeLeaderMigrationConfiguration(
  doc: unknown,
  path: string,
): { config?: LeaderMigrationConfiguration; errors: Error[] } {
  const at = `${FLAG}: ${path}`;
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    return { errors: [new Error(`${at}: want a LeaderMigrationConfiguration object`)] };
  const o = doc as Record<string, unknown>;
  const errors: Error[] = [];
  if (o.apiVersion !== LEADER_MIGRATION_API_VERSION)
    errors.push(
      new Error(`${at}: apiVersion must be ${LEADER_MIGRATION_API_VERSION}, got ${JSON.stringify(o.apiVersion)}`),
    );
  if (o.kind !== 'LeaderMigrationConfiguration')
    errors.push(new Error(`${at}: kind must be LeaderMigrationConfiguration, got ${JSON.stringify(o.kind)}`));
  const leaders = o.controllerLeaders ?? [];
  if (!Array.isArray(leaders)) {
    errors.push(new Error(`${at}: controllerLeaders: want a list, got ${JSON.stringify(leaders)}`));
    return { errors };
  }
  const config: LeaderMigrationConfiguration = {
    leaderName: str(o.leaderName) ?? '',
    resourceLock: str(o.resourceLock) || 'leases',
    controllerLeaders: leaders.map((l: unknown) => {
      const e = (typeof l === 'object' && l !== null ? l : {}) as Record<string, unknown>;
      return { name: str(e.name) ?? '', component: str(e.component) ?? '' };
    }),
  };
  if (o.resourceLock !== undefined && typeof o.resourceLock !== 'string')
    errors.push(new Error(`${at}: resourceLock: want a string, got ${JSON.stringify(o.resourceLock)}`));
  errors.push(...validateLeaderMigrationConfiguration(config).map((m) => new Error(`${at}: ${m}`)));
  return errors.length ? { errors } : { config, errors };
}

/** 1.21's `ValidateLeaderMigrationConfiguration`: every problem, as `field: message`. */
export function validateLeaderMigrationConfiguration(c: LeaderMigrationConfiguration): string[] {
  const errs: string[] = [];
  if (!c.leaderName) errs.push('leaderName: Required value: leaderName must be set for LeaderMigrationConfiguration');
  if (c.resourceLock !== 'leases' && c.resourceLock !== 'endpoints')
    errs.push(
      `resourceLock: Invalid value: ${JSON.stringify(c.resourceLock)}: resource Lock must be one of 'leases' or 'endpoints'`,
    );
  c.controllerLeaders.forEach((l, i) => {
    if (!l.component) errs.push(`controllerLeaders[${i}].component: Required value: component must be set`);
    if (!l.name) errs.push(`controllerLeaders[${i}].name: Required value: name must be set`);
  });
  return errs;
}

/** Reads, decodes and validates the file at `path`; problems name the option and the file. */
export function readLeaderMigrationConfiguration(path: string): {
  config?: LeaderMigrationConfiguration;
  errors: Error[];
} {
  if (!existsSync(path)) return { errors: [new Error(`${FLAG}: file ${JSON.stringify(path)} does not exist`)] };
  let doc: unknown;
  try {
    doc = parseYamlDocument(readFileSync(path, 'utf8'));
  } catch (err) {
    return { errors: [new Error(`${FLAG}: cannot read ${path}: ${(err as Error).message}`)] };
  }
  return decodeLeaderMigrationConfiguration(doc, path);
}

/**
 * The checks of both options together (1.21's `LeaderMigrationOptions.Validate` and `ApplyTo`): leader migration
 * needs its feature gate; a file given needs `--enable-leader-migration` (1.21 ignores it silently; here that is
 * refused); the file must read and validate.
 */
export function validateLeaderMigrationOptions(o: {
  enableLeaderMigration: boolean;
  leaderMigrationConfig: string;
  featureEnabled: boolean;
}): Error[] {
  const errs: Error[] = [];
  if (o.enableLeaderMigration && !o.featureEnabled)
    errs.push(
      new Error(
        `--enable-leader-migration: Leader Migration requires feature gate ${LEADER_MIGRATION_FEATURE} (--feature-gates=${LEADER_MIGRATION_FEATURE}=true)`,
      ),
    );
  if (o.leaderMigrationConfig !== '') {
    if (!o.enableLeaderMigration) errs.push(new Error(`${FLAG} is given but --enable-leader-migration is false`));
    errs.push(...readLeaderMigrationConfiguration(o.leaderMigrationConfig).errors);
  }
  return errs;
}
