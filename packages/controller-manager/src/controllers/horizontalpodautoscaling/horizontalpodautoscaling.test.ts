import {
  type Deployment,
  DeploymentKind,
  EventKind,
  type HorizontalPodAutoscaler,
  HorizontalPodAutoscalerKind,
  type HorizontalPodAutoscalerV2beta2,
  HorizontalPodAutoscalerV2beta2Kind,
  NamespaceKind,
} from '@platform/api';
import { parseOrExit } from '@platform/common';
import { Command } from 'commander';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { type Condition } from './replicas';
import { HPAControllerOptions, horizontalPodAutoscalingController, NO_METRICS_ERROR, readConditions } from './index';

jest.setTimeout(90_000);

const NS = 'hpa';

test('options: defaults and a negative tolerance', () => {
  const parse = (args: string[]): { errors: string[]; o: HPAControllerOptions } => {
    const o = new HPAControllerOptions();
    const cmd = new Command('test');
    o.addFlags(cmd);
    const out = parseOrExit(cmd, [o as never], args, undefined, { stdout: () => {}, stderr: () => {} });
    return { errors: out.errors.map((e) => e.message), o };
  };
  expect(parse([]).o.values()).toEqual({
    syncPeriodMs: 15_000,
    tolerance: 0.1,
    downscaleStabilizationMs: 300_000,
    cpuInitializationPeriodMs: 300_000,
    initialReadinessDelayMs: 30_000,
  });
  expect(parse(['--horizontal-pod-autoscaler-sync-period=1s']).o.values().syncPeriodMs).toBe(1000);
  expect(parse(['--horizontal-pod-autoscaler-tolerance=-1']).errors).toEqual([
    '--horizontal-pod-autoscaler-tolerance must not be negative, got -1',
  ]);
});

describe('against an API server', () => {
  let h: ControllerHarness;
  beforeAll(async () => {
    h = await startControllerHarness();
    await h.client.resource(NamespaceKind).create({ metadata: { name: NS } });
    h.start(horizontalPodAutoscalingController, (o) => (o.syncPeriodMs = 300));
  });
  afterAll(async () => {
    await h?.stop();
  });
  const deployments = () => h.client.resource(DeploymentKind, NS);
  const hpas = () => h.client.resource(HorizontalPodAutoscalerKind, NS);
  const replicas = async (name: string): Promise<number | undefined> => (await deployments().get(name)).spec?.replicas;
  const setReplicas = (name: string, n: number) => deployments().patch(name, 'merge', { spec: { replicas: n } });
  const condition = async (name: string, type: string): Promise<Condition | undefined> =>
    readConditions(await hpas().get(name)).find((c) => c.type === type);
  const events = async (name: string, reason: string): Promise<string[]> =>
    (await h.client.resource(EventKind, NS).list()).items
      .filter((e) => e.involvedObject?.name === name && e.reason === reason)
      .map((e) => e.message as string);

  async function deployment(name: string, n: number): Promise<void> {
    await deployments().create({
      metadata: { name },
      spec: {
        replicas: n,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
      },
    } as Deployment);
  }
  async function hpa(name: string, min: number, max: number): Promise<void> {
    await hpas().create({
      metadata: { name },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name }, minReplicas: min, maxReplicas: max },
    } as HorizontalPodAutoscaler);
  }

  test('without a metrics API the replica count is held within min and max, and the HPA says why', async () => {
    await deployment('web', 1);
    await hpa('web', 2, 4);
    await waitFor('scaled up to minReplicas', async () => (await replicas('web')) === 2);
    await waitFor('SuccessfulRescale', async () =>
      (await events('web', 'SuccessfulRescale')).includes(
        'New size: 2; reason: Current number of replicas below Spec.MinReplicas',
      ),
    );
    // In range: the metrics are needed, and there are none.
    await waitFor(
      'ScalingActive False',
      async () => (await condition('web', 'ScalingActive'))?.reason === 'FailedGetResourceMetric',
    );
    expect((await condition('web', 'ScalingActive'))?.status).toBe('False');
    expect((await condition('web', 'ScalingActive'))?.message).toContain(
      'unable to fetch metrics from resource metrics API',
    );
    await waitFor('FailedGetResourceMetric Event', async () =>
      (await events('web', 'FailedGetResourceMetric')).includes(NO_METRICS_ERROR),
    );
    expect(await replicas('web')).toBe(2);
    await waitFor('status', async () => (await hpas().get('web')).status?.currentReplicas === 2);

    await setReplicas('web', 9);
    await waitFor('scaled down to maxReplicas', async () => (await replicas('web')) === 4);
    expect((await condition('web', 'AbleToScale'))?.status).toBe('True');

    // Scaled to zero by hand: autoscaling is off.
    await setReplicas('web', 0);
    await waitFor(
      'ScalingDisabled',
      async () => (await condition('web', 'ScalingActive'))?.reason === 'ScalingDisabled',
    );
    expect(await replicas('web')).toBe(0);
    expect(h.errors).toEqual([]);
  });

  test('custom and external metrics are refused, saying so', async () => {
    await deployment('custom', 2);
    await h.client.resource(HorizontalPodAutoscalerV2beta2Kind, NS).create({
      metadata: { name: 'custom' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'custom' },
        minReplicas: 1,
        maxReplicas: 4,
        metrics: [
          {
            type: 'Pods',
            pods: { metric: { name: 'http_requests' }, target: { type: 'AverageValue', averageValue: '10' } },
          },
          {
            type: 'External',
            external: { metric: { name: 'queue_length' }, target: { type: 'Value', value: '30' } },
          },
        ],
      },
    } as HorizontalPodAutoscalerV2beta2);
    await waitFor(
      'FailedGetPodsMetric',
      async () => (await condition('custom', 'ScalingActive'))?.reason === 'FailedGetPodsMetric',
    );
    expect((await condition('custom', 'ScalingActive'))?.message).toBe(
      'the HPA was unable to compute the replica count: failed to get pods metric value: unable to get metric http_requests: the custom metrics API (custom.metrics.platform) is not supported yet by this controller',
    );
    await waitFor('FailedGetExternalMetric Event', async () =>
      (await events('custom', 'FailedGetExternalMetric')).includes(
        'failed to get external metric value: unable to get external metric queue_length: the external metrics API (external.metrics.platform) is not supported yet by this controller',
      ),
    );
    await waitFor('FailedComputeMetricsReplicas', async () =>
      (await events('custom', 'FailedComputeMetricsReplicas')).some((m) =>
        m.startsWith('invalid metrics (2 invalid out of 2), first error is: failed to get pods metric value'),
      ),
    );
    expect(await replicas('custom')).toBe(2);
  });

  test('a missing target is FailedGetScale', async () => {
    await hpa('nothing', 1, 3);
    await waitFor(
      'AbleToScale False',
      async () => (await condition('nothing', 'AbleToScale'))?.reason === 'FailedGetScale',
    );
    await waitFor('FailedGetScale Event', async () => (await events('nothing', 'FailedGetScale')).length > 0);
  });
});
