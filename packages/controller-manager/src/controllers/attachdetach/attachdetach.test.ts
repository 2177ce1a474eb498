import {
  EventKind,
  NamespaceKind,
  type PersistentVolume,
  type PersistentVolumeClaim,
  PersistentVolumeClaimKind,
  PersistentVolumeKind,
  type Pod,
  PodKind,
} from '@platform/api';
import { parseOrExit } from '@platform/common';
import { Command } from 'commander';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { attachDetachController, AttachDetachOptions, attachProblem } from './index';

jest.setTimeout(90_000);

const NS = 'ad';

test('attachProblem: CSI and in-tree attachable volumes, not hostPath', () => {
  const pv = (spec: object): PersistentVolume => ({ metadata: { name: 'v' }, spec }) as PersistentVolume;
  expect(attachProblem(pv({ csi: { driver: 'd', volumeHandle: 'h' } }))).toMatch(/CSI driver "d" cannot attach it/);
  expect(attachProblem(pv({ gcePersistentDisk: { pdName: 'x' } }))).toMatch(/no in-tree volume plugin exists/);
  expect(attachProblem(pv({ hostPath: { path: '/x' } }))).toBeUndefined();
});

test('options: the reconcile period must exceed a second', () => {
  const errors = (args: string[]): string[] => {
    const o = new AttachDetachOptions();
    const cmd = new Command('test');
    o.addFlags(cmd);
    return parseOrExit(cmd, [o as never], args, undefined, { stdout: () => {}, stderr: () => {} }).errors.map(
      (e) => e.message,
    );
  };
  expect(errors(['--attach-detach-reconcile-sync-period=5s', '--disable-attach-detach-reconcile-sync'])).toEqual([]);
  expect(errors(['--attach-detach-reconcile-sync-period=500ms'])).toEqual([
    '--attach-detach-reconcile-sync-period must be at least one second',
  ]);
});

describe('against an API server', () => {
  let h: ControllerHarness;
  beforeAll(async () => {
    h = await startControllerHarness();
    await h.client.resource(NamespaceKind).create({ metadata: { name: NS } });
    h.start(attachDetachController, (o) => (o.reconcileSyncPeriodMs = 1000));
  });
  afterAll(async () => {
    await h?.stop();
  });

  test('a scheduled pod with a CSI volume gets one FailedAttachVolume Event', async () => {
    await h.client.resource(PersistentVolumeKind).create({
      metadata: { name: 'csi-vol' },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        csi: { driver: 'x.csi', volumeHandle: 'h1' },
      },
    } as PersistentVolume);
    await h.client.resource(PersistentVolumeClaimKind, NS).create({
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeName: 'csi-vol' },
    } as PersistentVolumeClaim);
    await h.client.resource(PodKind, NS).create({
      metadata: { name: 'p' },
      spec: {
        nodeName: 'n1',
        containers: [{ name: 'c', image: 'busybox' }],
        volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'data' } }],
      },
    } as Pod);
    const events = async () =>
      (await h.client.resource(EventKind, NS).list()).items.filter(
        (e) => e.involvedObject?.name === 'p' && e.reason === 'FailedAttachVolume',
      );
    await waitFor('the Event', async () => (await events()).length > 0);
    expect((await events())[0]?.message).toMatch(/storage\.platform/);
    // Several reconciles later, still one Event (count 1).
    await new Promise((r) => setTimeout(r, 2500));
    const all = await events();
    expect(all).toHaveLength(1);
    expect(all[0]?.count ?? 1).toBe(1);
    expect(h.errors).toEqual([]);
  });
});
