import { alreadyExists, notFound } from '@platform/api';

import { RestClient } from '../rest/rest-client';
import { Clientset } from '../rest/resource-client';
import {
  AnnotationLock,
  decodeAnnotationRecord,
  encodeAnnotationRecord,
  type LeaderElectionRecord,
  LeaseLock,
  leaseSpecToRecord,
  type LockState,
  MultiLock,
  newResourceLock,
  recordToLeaseSpec,
  type ResourceLock,
  UNKNOWN_LEADER,
} from './resource-lock';

const T0 = Date.parse('2021-04-08T10:20:30.456Z');
const record: LeaderElectionRecord = {
  holderIdentity: 'host_1234',
  leaseDurationSeconds: 15,
  acquireTimeMs: T0,
  renewTimeMs: T0 + 2_000,
  leaderTransitions: 3,
};

describe('the annotation record', () => {
  it('encodes as client-go does: its field order, times in whole seconds', () => {
    expect(encodeAnnotationRecord(record)).toBe(
      '{"holderIdentity":"host_1234","leaseDurationSeconds":15,"acquireTime":"2021-04-08T10:20:30Z","renewTime":"2021-04-08T10:20:32Z","leaderTransitions":3}',
    );
  });

  it('decodes what client-go writes, and round-trips to the second', () => {
    expect(decodeAnnotationRecord(encodeAnnotationRecord(record))).toEqual({
      ...record,
      acquireTimeMs: Date.parse('2021-04-08T10:20:30Z'),
      renewTimeMs: Date.parse('2021-04-08T10:20:32Z'),
    });
    // A released lock (client-go writes an empty holder) and fields missing altogether read as zero.
    expect(decodeAnnotationRecord('{"holderIdentity":"","leaseDurationSeconds":1,"leaderTransitions":2}')).toEqual({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTimeMs: 0,
      renewTimeMs: 0,
      leaderTransitions: 2,
    });
    expect(decodeAnnotationRecord('{}').holderIdentity).toBe('');
    // Fractional seconds (a writer with finer times) are accepted.
    expect(decodeAnnotationRecord('{"renewTime":"2021-04-08T10:20:32.5Z"}').renewTimeMs).toBe(
      Date.parse('2021-04-08T10:20:32.500Z'),
    );
  });

  it('rejects malformed records with a message saying what is wrong', () => {
    expect(() => decodeAnnotationRecord('not json')).toThrow(/leader election record: not JSON/);
    expect(() => decodeAnnotationRecord('[1]')).toThrow('leader election record: want a JSON object');
    expect(() => decodeAnnotationRecord('{"holderIdentity":7}')).toThrow(/holderIdentity: want a string/);
    expect(() => decodeAnnotationRecord('{"leaseDurationSeconds":"15"}')).toThrow(
      /leaseDurationSeconds: want an integer/,
    );
    expect(() => decodeAnnotationRecord('{"renewTime":"yesterday"}')).toThrow(/renewTime: invalid time "yesterday"/);
  });
});

describe('the Lease record', () => {
  it('maps to and from a Lease spec with microsecond times', () => {
    const spec = recordToLeaseSpec(record);
    expect(spec).toEqual({
      holderIdentity: 'host_1234',
      leaseDurationSeconds: 15,
      acquireTime: '2021-04-08T10:20:30.456000Z',
      renewTime: '2021-04-08T10:20:32.456000Z',
      leaseTransitions: 3,
    });
    expect(leaseSpecToRecord(spec)).toEqual(record);
    expect(leaseSpecToRecord(undefined)).toEqual({
      holderIdentity: '',
      leaseDurationSeconds: 0,
      acquireTimeMs: 0,
      renewTimeMs: 0,
      leaderTransitions: 0,
    });
  });
});

describe('newResourceLock', () => {
  const rest = new RestClient({ server: 'https://127.0.0.1:1' });
  const clientset = new Clientset(rest);
  afterAll(() => rest.close());
  const lock = (resourceLock: string): ResourceLock =>
    newResourceLock(clientset, { resourceLock, resourceNamespace: 'ns', resourceName: 'cm' }, 'me');

  it('builds every lock type of Kubernetes 1.21 on --leader-elect-resource-name/-namespace', () => {
    expect(lock('leases')).toBeInstanceOf(LeaseLock);
    expect(lock('endpoints')).toBeInstanceOf(AnnotationLock);
    expect(lock('configmaps')).toBeInstanceOf(AnnotationLock);
    expect(lock('endpointsleases')).toBeInstanceOf(MultiLock);
    expect(lock('configmapsleases')).toBeInstanceOf(MultiLock);
    for (const t of ['leases', 'endpoints', 'configmaps', 'endpointsleases', 'configmapsleases'])
      expect(lock(t).describe()).toBe('ns/cm');
  });

  it('refuses an unknown lock type naming the option', () => {
    expect(() => lock('zookeeper')).toThrow(
      '--leader-elect-resource-lock: unknown lock type "zookeeper": want one of endpoints, configmaps, leases, endpointsleases, configmapsleases',
    );
  });

  it('refuses to update before anything was read', async () => {
    await expect(lock('endpoints').update(record)).rejects.toThrow(/ns\/cm: not read yet/);
  });
});

/** An in-memory lock, to drive MultiLock through the cases a real server makes hard to arrange. */
class MemoryLock implements ResourceLock {
  stored?: LeaderElectionRecord;
  private rv = 0;
  constructor(private readonly resource: string) {}
  private state(): LockState {
    return { record: this.stored as LeaderElectionRecord, version: String(this.rv) };
  }
  get(): Promise<LockState> {
    if (!this.stored) return Promise.reject(notFound({ group: '', resource: this.resource }, 'x'));
    return Promise.resolve(this.state());
  }
  create(r: LeaderElectionRecord): Promise<LockState> {
    if (this.stored) return Promise.reject(alreadyExists({ group: '', resource: this.resource }, 'x'));
    this.stored = r;
    this.rv++;
    return Promise.resolve(this.state());
  }
  update(r: LeaderElectionRecord): Promise<LockState> {
    if (!this.stored) return Promise.reject(notFound({ group: '', resource: this.resource }, 'x'));
    this.stored = r;
    this.rv++;
    return Promise.resolve(this.state());
  }
  describe(): string {
    return `ns/${this.resource}`;
  }
}

describe('MultiLock', () => {
  const other = { ...record, holderIdentity: 'other' };
  const mine = { ...record, holderIdentity: 'me' };

  it("reads the primary's record while only an old candidate writes the primary", async () => {
    const [p, s] = [new MemoryLock('endpoints'), new MemoryLock('leases')];
    p.stored = other;
    const ml = new MultiLock(p, s, 'me');
    expect((await ml.get()).record).toEqual(other);
    expect(ml.describe()).toBe('ns/endpoints');
  });

  it('reports an unknown leader when the two objects disagree', async () => {
    const [p, s] = [new MemoryLock('endpoints'), new MemoryLock('leases')];
    p.stored = other;
    s.stored = mine;
    expect((await new MultiLock(p, s, 'me').get()).record.holderIdentity).toBe(UNKNOWN_LEADER);
  });

  it('has a holder of the primary alone create the secondary (NotFound, then create)', async () => {
    const [p, s] = [new MemoryLock('endpoints'), new MemoryLock('leases')];
    p.stored = mine;
    const ml = new MultiLock(p, s, 'me');
    await expect(ml.get()).rejects.toMatchObject({ status: { reason: 'NotFound' } });
    const renewed = { ...mine, renewTimeMs: T0 + 9_000 };
    await ml.create(renewed);
    expect(s.stored).toEqual(renewed);
    expect((await ml.get()).record).toEqual(mine);
  });

  it('does not write the secondary when another candidate created the primary first', async () => {
    const [p, s] = [new MemoryLock('endpoints'), new MemoryLock('leases')];
    p.stored = other;
    await expect(new MultiLock(p, s, 'me').create(mine)).rejects.toMatchObject({
      status: { reason: 'AlreadyExists' },
    });
    expect(s.stored).toBeUndefined();
  });

  it('updates both, creating the secondary when it is missing', async () => {
    const [p, s] = [new MemoryLock('configmaps'), new MemoryLock('leases')];
    p.stored = other;
    const ml = new MultiLock(p, s, 'me');
    await ml.get();
    const st = await ml.update(mine);
    expect([p.stored, s.stored]).toEqual([mine, mine]);
    expect(st.version).toBe('1,1');
    await ml.update({ ...mine, leaderTransitions: 4 });
    expect(s.stored?.leaderTransitions).toBe(4);
  });
});
