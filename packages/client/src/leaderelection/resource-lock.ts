/**
 * The objects a leader election record lives in: every `--leader-elect-resource-lock` of Kubernetes 1.21 (model:
 * client-go `tools/leaderelection/resourcelock/`).
 *
 * - `leases`: the record is the spec of a `coordination.platform/v1` Lease.
 * - `endpoints`, `configmaps`: the record is JSON in the annotation `control-plane.alpha.kubernetes.io/leader` of an
 *   Endpoints or ConfigMap (the locks before Leases; still read by older candidates).
 * - `endpointsleases`, `configmapsleases`: the migration locks (client-go's `MultiLock`): the old-style object is
 *   the primary, read first and authoritative; a Lease of the same name is the secondary, written with it. Running
 *   every candidate on a multilock for one release lets the next one drop the old object with the same leader.
 *
 * A lock remembers the object it last read or wrote; `update` writes over that object with its resourceVersion, so
 * that a concurrent writer makes it fail with 409 instead of being overwritten.
 */
import {
  type ApiObject,
  type ConfigMap,
  ConfigMapKind,
  type Endpoints,
  EndpointsKind,
  isAlreadyExists,
  isNotFound,
  type Lease,
  LeaseKind,
} from '@platform/api';
import { RESOURCE_LOCKS } from '@platform/common';

import { type Clientset, type ResourceClient } from '../rest/resource-client';

/** The annotation holding the JSON record on Endpoints and ConfigMap locks (client-go's key, unchanged). */
export const LEADER_ELECTION_RECORD_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';

/** The holder a multilock reports when its two objects name different holders (client-go's `UnknownLeader`). */
export const UNKNOWN_LEADER = 'leaderelection.platform/unknown';

/** Who leads, since when and for how long (client-go's `LeaderElectionRecord`); times in ms since the epoch. */
export interface LeaderElectionRecord {
  /** '' when nobody holds the lock (after a release). */
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTimeMs: number;
  renewTimeMs: number;
  leaderTransitions: number;
}

/** A record read from (or written to) a lock, with what identifies that write. */
export interface LockState {
  record: LeaderElectionRecord;
  /**
   * The resourceVersion(s) of the lock object(s). Every write changes it, so a candidate that sees it unchanged
   * for a lease duration knows the holder stopped renewing (even when two renewals encode the same record).
   */
  version: string;
}

/** Where a leader election record is stored. Calls are not concurrent (the elector makes one at a time). */
export interface ResourceLock {
  /** Reads the record. Throws a NotFound `StatusError` when the lock object does not exist. */
  get(signal?: AbortSignal): Promise<LockState>;
  /** Creates the lock object holding `record`; throws AlreadyExists (409) when another candidate was first. */
  create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<LockState>;
  /**
   * Writes `record` over the object last read or written; throws Conflict (409) when it changed since, and an
   * `Error` when nothing was read yet.
   */
  update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<LockState>;
  /** `namespace/name` of the lock, for logs. */
  describe(): string;
}

/** The record of an unheld lock (an old-style object without the annotation reads as this). */
export const EMPTY_RECORD: LeaderElectionRecord = Object.freeze({
  holderIdentity: '',
  leaseDurationSeconds: 0,
  acquireTimeMs: 0,
  renewTimeMs: 0,
  leaderTransitions: 0,
});

/** `metav1.Time` on the wire: RFC 3339 in whole seconds, UTC. */
function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** `metav1.MicroTime` on the wire: RFC 3339 with six fractional digits, UTC. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

/** Parses a wire time; '' and absent read as 0 (Go's zero time), anything else unparsable is an error. */
function parseTime(value: unknown, field: string): number {
  if (value === undefined || value === null || value === '') return 0;
  const ms = typeof value === 'string' ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) throw new Error(`leader election record: ${field}: invalid time ${JSON.stringify(value)}`);
  return ms;
}

function parseInt32(value: unknown, field: string): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw new Error(`leader election record: ${field}: want an integer, got ${JSON.stringify(value)}`);
  return value;
}

/**
 * Encodes a record as the annotation's JSON, byte for byte as client-go writes it (field order and `metav1.Time`
 * seconds), so that Kubernetes tools read it.
 */
export function encodeAnnotationRecord(r: LeaderElectionRecord): string {
  return JSON.stringify({
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    acquireTime: rfc3339(r.acquireTimeMs),
    renewTime: rfc3339(r.renewTimeMs),
    leaderTransitions: r.leaderTransitions,
  });
}

/** Decodes the annotation's JSON. Missing fields read as zero (as Go's decoder); malformed input throws. */
export function decodeAnnotationRecord(text: string): LeaderElectionRecord {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch (err) {
    throw new Error(`leader election record: not JSON: ${(err as Error).message}`);
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o))
    throw new Error('leader election record: want a JSON object');
  const r = o as Record<string, unknown>;
  const holder = r.holderIdentity ?? '';
  if (typeof holder !== 'string')
    throw new Error(`leader election record: holderIdentity: want a string, got ${JSON.stringify(holder)}`);
  return {
    holderIdentity: holder,
    leaseDurationSeconds: parseInt32(r.leaseDurationSeconds, 'leaseDurationSeconds'),
    acquireTimeMs: parseTime(r.acquireTime, 'acquireTime'),
    renewTimeMs: parseTime(r.renewTime, 'renewTime'),
    leaderTransitions: parseInt32(r.leaderTransitions, 'leaderTransitions'),
  };
}

/** The spec of a Lease holding `r` (client-go's `LeaderElectionRecordToLeaseSpec`). */
export function recordToLeaseSpec(r: LeaderElectionRecord): NonNullable<Lease['spec']> {
  return {
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    acquireTime: microTime(r.acquireTimeMs),
    renewTime: microTime(r.renewTimeMs),
    leaseTransitions: r.leaderTransitions,
  };
}

/** The record a Lease spec holds (client-go's `LeaseSpecToLeaderElectionRecord`). */
export function leaseSpecToRecord(spec: Lease['spec']): LeaderElectionRecord {
  return {
    holderIdentity: spec?.holderIdentity ?? '',
    leaseDurationSeconds: spec?.leaseDurationSeconds ?? 0,
    acquireTimeMs: parseTime(spec?.acquireTime, 'acquireTime'),
    renewTimeMs: parseTime(spec?.renewTime, 'renewTime'),
    leaderTransitions: spec?.leaseTransitions ?? 0,
  };
}

function notInitialized(lock: ResourceLock): Error {
  return new Error(`leader election lock ${lock.describe()}: not read yet, call get or create first`);
}

/** The `leases` lock: the record is the Lease's spec. */
export class LeaseLock implements ResourceLock {
  private lease?: Lease & ApiObject;

  constructor(
    private readonly client: ResourceClient<Lease & ApiObject>,
    private readonly namespace: string,
    private readonly name: string,
  ) {}

  private state(lease: Lease & ApiObject): LockState {
    this.lease = lease;
    return { record: leaseSpecToRecord(lease.spec), version: lease.metadata?.resourceVersion ?? '' };
  }

  async get(signal?: AbortSignal): Promise<LockState> {
    return this.state(await this.client.get(this.name, { signal }));
  }

  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<LockState> {
    const lease = { metadata: { name: this.name, namespace: this.namespace }, spec: recordToLeaseSpec(record) };
    return this.state(await this.client.create(lease, { signal }));
  }

  async update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<LockState> {
    if (!this.lease) throw notInitialized(this);
    return this.state(await this.client.update({ ...this.lease, spec: recordToLeaseSpec(record) }, { signal }));
  }

  describe(): string {
    return `${this.namespace}/${this.name}`;
  }
}

/** The `endpoints` and `configmaps` locks: the record is an annotation of the object (its data is left alone). */
export class AnnotationLock<T extends (Endpoints | ConfigMap) & ApiObject> implements ResourceLock {
  private obj?: T;

  constructor(
    private readonly client: ResourceClient<T>,
    private readonly namespace: string,
    private readonly name: string,
  ) {}

  private state(obj: T): LockState {
    this.obj = obj;
    const raw = obj.metadata?.annotations?.[LEADER_ELECTION_RECORD_ANNOTATION];
    return {
      record: raw === undefined ? { ...EMPTY_RECORD } : decodeAnnotationRecord(raw),
      version: obj.metadata?.resourceVersion ?? '',
    };
  }

  async get(signal?: AbortSignal): Promise<LockState> {
    return this.state(await this.client.get(this.name, { signal }));
  }

  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<LockState> {
    const obj = {
      metadata: {
        name: this.name,
        namespace: this.namespace,
        annotations: { [LEADER_ELECTION_RECORD_ANNOTATION]: encodeAnnotationRecord(record) },
      },
    } as unknown as T;
    return this.state(await this.client.create(obj, { signal }));
  }

  async update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<LockState> {
    const obj = this.obj;
    if (!obj) throw notInitialized(this);
    const annotations = {
      ...obj.metadata?.annotations,
      [LEADER_ELECTION_RECORD_ANNOTATION]: encodeAnnotationRecord(record),
    };
    return this.state(await this.client.update({ ...obj, metadata: { ...obj.metadata, annotations } }, { signal }));
  }

  describe(): string {
    return `${this.namespace}/${this.name}`;
  }
}

/**
 * A migration lock (client-go's `MultiLock`): reads the primary, and the secondary only to compare holders;
 * writes both, primary first. While an old candidate (primary only) leads, the secondary does not exist and the
 * primary's record is the answer; holders that disagree read as {@link UNKNOWN_LEADER}, so nobody takes over
 * before the lease duration passes.
 */
export class MultiLock implements ResourceLock {
  constructor(
    private readonly primary: ResourceLock,
    private readonly secondary: ResourceLock,
    private readonly identity: string,
  ) {}

  async get(signal?: AbortSignal): Promise<LockState> {
    const p = await this.primary.get(signal);
    let s: LockState;
    try {
      s = await this.secondary.get(signal);
    } catch (err) {
      // Held by a candidate that knows only the primary.
      if (isNotFound(err) && p.record.holderIdentity !== this.identity) return { ...p, version: `${p.version},` };
      throw err;
    }
    const record =
      p.record.holderIdentity === s.record.holderIdentity ? p.record : { ...p.record, holderIdentity: UNKNOWN_LEADER };
    return { record, version: `${p.version},${s.version}` };
  }

  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<LockState> {
    let p: LockState;
    try {
      p = await this.primary.create(record, signal);
    } catch (err) {
      // The primary may exist without the secondary (a lock of an older candidate, or a create that stopped half way).
      if (!isAlreadyExists(err)) throw err;
      p = await this.primary.get(signal);
      // Another candidate created it first: leave the secondary to that candidate (client-go would write it too).
      if (p.record.holderIdentity !== record.holderIdentity) throw err;
    }
    const s = await this.secondary.create(record, signal);
    return { record, version: `${p.version},${s.version}` };
  }

  async update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<LockState> {
    const p = await this.primary.update(record, signal);
    let s: LockState;
    try {
      await this.secondary.get(signal);
      s = await this.secondary.update(record, signal);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      s = await this.secondary.create(record, signal);
    }
    return { record, version: `${p.version},${s.version}` };
  }

  describe(): string {
    return this.primary.describe();
  }
}

/** Where a lock lives and who takes it (the `--leader-elect-resource-*` options and the candidate's identity). */
export interface ResourceLockConfig {
  resourceLock: string;
  resourceNamespace: string;
  resourceName: string;
}

/**
 * The lock of `--leader-elect-resource-lock` (client-go's `resourcelock.New`) in `resourceNamespace`, named
 * `resourceName`, written through `clientset`. Throws an `Error` naming the option for an unknown lock type.
 */
export function newResourceLock(clientset: Clientset, c: ResourceLockConfig, identity: string): ResourceLock {
  const { resourceNamespace: ns, resourceName: name } = c;
  const leases = (): ResourceLock => new LeaseLock(clientset.resource(LeaseKind, ns), ns, name);
  const endpoints = (): ResourceLock => new AnnotationLock(clientset.resource(EndpointsKind, ns), ns, name);
  const configMaps = (): ResourceLock => new AnnotationLock(clientset.resource(ConfigMapKind, ns), ns, name);
  switch (c.resourceLock) {
    case 'leases':
      return leases();
    case 'endpoints':
      return endpoints();
    case 'configmaps':
      return configMaps();
    case 'endpointsleases':
      return new MultiLock(endpoints(), leases(), identity);
    case 'configmapsleases':
      return new MultiLock(configMaps(), leases(), identity);
    default:
      throw new Error(
        `--leader-elect-resource-lock: unknown lock type ${JSON.stringify(c.resourceLock)}: want one of ${RESOURCE_LOCKS.join(', ')}`,
      );
  }
}
