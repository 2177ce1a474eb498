import { Scheme } from '../scheme/scheme';
import { BindingKind } from './core/v1/binding';
import { ConfigMapKind } from './core/v1/config-map';
import { EndpointsKind } from './core/v1/endpoints';
import { EventKind } from './core/v1/event';
import { LimitRangeKind } from './core/v1/limit-range';
import { NamespaceKind } from './core/v1/namespace';
import { NodeKind } from './core/v1/node';
import { PersistentVolumeClaimKind, PersistentVolumeKind } from './core/v1/persistent-volume';
import { PodKind } from './core/v1/pod';
import { ReplicationControllerKind } from './core/v1/replication-controller';
import { ResourceQuotaKind } from './core/v1/resource-quota';
import { SecretKind } from './core/v1/secret';
import { ServiceKind } from './core/v1/service';
import { ServiceAccountKind } from './core/v1/service-account';

export * from './core/v1/config-map';
export * from './core/v1/pod';

/** Every built-in kind, in discovery order. */
export const BUILTIN_KINDS = [
  BindingKind,
  ConfigMapKind,
  EndpointsKind,
  EventKind,
  LimitRangeKind,
  NamespaceKind,
  NodeKind,
  PersistentVolumeClaimKind,
  PersistentVolumeKind,
  PodKind,
  ReplicationControllerKind,
  ResourceQuotaKind,
  SecretKind,
  ServiceAccountKind,
  ServiceKind,
];

/** A new scheme holding every built-in kind. */
export function builtinScheme(): Scheme {
  return new Scheme().add(...BUILTIN_KINDS);
}
