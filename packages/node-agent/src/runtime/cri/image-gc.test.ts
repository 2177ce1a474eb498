import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  describeWithContainerd,
  PAUSE_IMAGE,
  startContainerd,
  TEST_IMAGE,
  type TestContainerd,
} from '../../testing/containerd';
import type { PodSandboxConfig } from '../runtime';
import { CriRuntime } from './cri-runtime';
import { ImageGcManager, nodeImages } from './image-gc';

describeWithContainerd('image garbage collection against a real containerd', () => {
  let ctrd: TestContainerd;
  let rt: CriRuntime;

  beforeAll(async () => {
    ctrd = await startContainerd();
    rt = new CriRuntime({ endpoint: ctrd.endpoint, requestTimeoutMs: 30000, sandboxImage: PAUSE_IMAGE });
  }, 60000);

  afterAll(async () => {
    await rt?.close();
    await ctrd?.stop();
  }, 60000);

  test('node status lists the images largest first, with names and sizes', async () => {
    const list = await nodeImages(rt, 10);
    expect(list.flatMap((i) => i.names)).toEqual(expect.arrayContaining([TEST_IMAGE, PAUSE_IMAGE]));
    expect(list.every((i) => i.sizeBytes > 0)).toBe(true);
    expect(await nodeImages(rt, 0)).toEqual([]);
    expect(await nodeImages(rt, 1)).toHaveLength(1);
  });

  test('collects only over the high threshold, only unused images older than the TTL, never the sandbox image', async () => {
    let now = Date.now();
    let usedPercent = 50;
    const gc = new ImageGcManager(rt, {
      highThresholdPercent: 85,
      lowThresholdPercent: 80,
      minAgeMs: 60_000,
      pinnedImages: [PAUSE_IMAGE],
      fsStats: () => Promise.resolve({ capacityBytes: 1e9, availableBytes: 1e9 * (1 - usedPercent / 100) }),
      now: () => now,
    });
    expect((await gc.garbageCollect()).removed).toEqual([]); // under the threshold
    usedPercent = 95;
    expect((await gc.garbageCollect()).removed).toEqual([]); // images younger than the TTL

    // A container (even one never started) keeps its image.
    const logDirectory = join(ctrd.logDir, 'default_gc_u');
    mkdirSync(logDirectory, { recursive: true });
    const sc: PodSandboxConfig = {
      metadata: { name: 'gc', namespace: 'default', uid: 'u', attempt: 0 },
      logDirectory,
      labels: {},
      annotations: {},
      linux: { cgroupParent: `${ctrd.cgroupParent}/podu`, securityContext: { namespaceOptions: { network: 'NODE' } } },
    };
    const sandboxId = await rt.runPodSandbox(sc);
    const cid = await rt.createContainer(
      sandboxId,
      {
        metadata: { name: 'c', attempt: 0 },
        image: TEST_IMAGE,
        command: ['true'],
        args: [],
        envs: [],
        mounts: [],
        labels: {},
        annotations: {},
        logPath: 'c/0.log',
      },
      sc,
    );
    now += 120_000;
    const r1 = await gc.garbageCollect();
    expect(r1.wanted).toBe(150_000_000);
    expect(r1.removed).toEqual([]);
    expect(await rt.imageStatus({ image: TEST_IMAGE })).toBeDefined();

    await rt.removeContainer(cid);
    await rt.removePodSandbox(sandboxId);
    const testImageId = (await rt.imageStatus({ image: TEST_IMAGE }))!.id;
    const r2 = await gc.garbageCollect();
    expect(r2.removed).toEqual([testImageId]);
    expect(r2.freed).toBeGreaterThan(0);
    expect(await rt.imageStatus({ image: TEST_IMAGE })).toBeUndefined();
    expect(await rt.imageStatus({ image: PAUSE_IMAGE })).toBeDefined();
  }, 60000);

  test('the default file-system stats come from the runtime’s image filesystem', async () => {
    const gc = new ImageGcManager(rt, { highThresholdPercent: 100, lowThresholdPercent: 80, minAgeMs: 0 });
    expect(await gc.garbageCollect()).toEqual({ wanted: 0, freed: 0, removed: [] });
    const gc2 = new ImageGcManager(rt, {
      highThresholdPercent: 1,
      lowThresholdPercent: 0,
      minAgeMs: 0,
      pinnedImages: [PAUSE_IMAGE],
    });
    // statfs of containerd's snapshotter: some bytes in use, so there is something to free (the pinned image stays).
    const r = await gc2.garbageCollect();
    expect(r.wanted).toBeGreaterThan(0);
    expect(r.removed).toEqual([]);
  });
});
