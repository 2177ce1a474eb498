/**
 * The HPA on the resource metrics API, end to end: an API server with aggregator routing, and a small extension
 * API server on 127.0.0.1 registered for `metrics.platform/v1beta1` (an APIService with a Service and Endpoints)
 * that serves PodMetrics the test sets. No node agent: the test creates the pods and reports them running and
 * ready itself. Deployments scale up on usage above target (a v1 CPU utilization HPA, and a v2beta2 memory
 * AverageValue HPA whose behaviour limits the step), down once the downscale stabilization window has passed, and
 * the HPA says FailedGetResourceMetric when the metrics API goes away.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import { type AddressInfo } from 'node:net';

import {
  type Deployment,
  DeploymentKind,
  EventKind,
  type HorizontalPodAutoscaler,
  HorizontalPodAutoscalerKind,
  type HorizontalPodAutoscalerV2beta2,
  HorizontalPodAutoscalerV2beta2Kind,
  NamespaceKind,
  parseSelector,
  type Pod,
  PodKind,
} from '@platform/api';
import { generateCertificateAuthority, issueCertificate, type PemPair } from '@platform/common';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { type Condition } from './replicas';
import { horizontalPodAutoscalingController, NO_METRICS_ERROR, readConditions } from './index';

jest.setTimeout(120_000);

const NS = 'hpa-metrics';
const GV = '/apis/metrics.platform/v1beta1';
const WINDOW_MS = 8_000;

/** The usage of one pod's container, as the test sets it. */
interface Usage {
  labels: Record<string, string>;
  cpu: string;
  memory: string;
}

/** The test's metrics server: discovery of `metrics.platform/v1beta1` and PodMetrics lists from `usage`. */
class MetricsServer {
  readonly usage = new Map<string, Usage>();
  readonly selectors: string[] = [];
  server!: https.Server;
  port = 0;

  constructor(private readonly serving: PemPair) {}

  async start(): Promise<void> {
    this.server = https.createServer({ cert: this.serving.certPem, key: this.serving.keyPem }, (req, res) =>
      this.handle(req, res),
    );
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'https://x');
    const json = (code: number, body: unknown): void => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === GV)
      return json(200, {
        kind: 'APIResourceList',
        apiVersion: 'v1',
        groupVersion: 'metrics.platform/v1beta1',
        resources: [
          { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
          { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
        ],
      });
    if (url.pathname === '/openapi/v2')
      return json(200, { swagger: '2.0', info: { title: 'metrics', version: 'v0' }, paths: {}, definitions: {} });
    const m = /^\/apis\/metrics\.platform\/v1beta1\/namespaces\/([^/]+)\/pods$/.exec(url.pathname);
    if (m) {
      const selectorText = url.searchParams.get('labelSelector') ?? '';
      this.selectors.push(selectorText);
      const selector = parseSelector(selectorText);
      const now = new Date().toISOString();
      const items = [...this.usage.entries()]
        .filter(([, u]) => selector.matches(u.labels))
        .map(([name, u]) => ({
          metadata: { name, namespace: m[1], labels: u.labels, creationTimestamp: now },
          timestamp: now,
          window: '30s',
          containers: [{ name: 'c', usage: { cpu: u.cpu, memory: u.memory } }],
        }));
      return json(200, { kind: 'PodMetricsList', apiVersion: 'metrics.platform/v1beta1', metadata: {}, items });
    }
    json(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound' });
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

describe('the HPA on the resource metrics API', () => {
  let h: ControllerHarness;
  let metrics: MetricsServer;
  let servingCA: PemPair;

  beforeAll(async () => {
    servingCA = await generateCertificateAuthority('metrics-ca');
    const serving = await issueCertificate(servingCA, {
      commonName: 'metrics.default.svc',
      usage: 'server',
      dns: ['metrics.default.svc'],
      ips: ['127.0.0.1'],
    });
    metrics = new MetricsServer(serving);
    await metrics.start();
    h = await startControllerHarness({
      configure: (c) => {
        c.aggregator = { enableAggregatorRouting: true, availabilityResyncMs: 1000, probeTimeoutMs: 20_000 };
      },
    });
    await h.client.resource(NamespaceKind).create({ metadata: { name: NS } });
    await h.server.request('POST', '/api/v1/namespaces/default/services', {
      body: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'metrics' },
        spec: { ports: [{ name: 'https', port: 443, targetPort: metrics.port }] },
      },
    });
    await h.server.request('POST', '/api/v1/namespaces/default/endpoints', {
      body: {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: 'metrics' },
        subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: metrics.port }] }],
      },
    });
    h.start(horizontalPodAutoscalingController, (o) => {
      o.syncPeriodMs = 500;
      o.downscaleStabilizationMs = WINDOW_MS;
    });
  }, 120_000);

  afterAll(async () => {
    await h?.stop();
    await metrics?.stop();
  });

  const deployments = () => h.client.resource(DeploymentKind, NS);
  const hpas = () => h.client.resource(HorizontalPodAutoscalerKind, NS);
  const replicas = async (name: string): Promise<number | undefined> => (await deployments().get(name)).spec?.replicas;
  const condition = async (name: string, type: string): Promise<Condition | undefined> =>
    readConditions(await hpas().get(name)).find((c) => c.type === type);
  const events = async (name: string, reason: string): Promise<string[]> =>
    (await h.client.resource(EventKind, NS).list()).items
      .filter((e) => e.involvedObject?.name === name && e.reason === reason)
      .map((e) => e.message as string);

  /** Registers the test's metrics server as `metrics.platform/v1beta1`. */
  async function registerMetricsAPI(): Promise<void> {
    const created = await h.server.request('POST', '/apis/apiregistration.platform/v1/apiservices', {
      body: {
        apiVersion: 'apiregistration.platform/v1',
        kind: 'APIService',
        metadata: { name: 'v1beta1.metrics.platform' },
        spec: {
          service: { namespace: 'default', name: 'metrics' },
          group: 'metrics.platform',
          version: 'v1beta1',
          caBundle: Buffer.from(servingCA.certPem).toString('base64'),
          groupPriorityMinimum: 100,
          versionPriority: 100,
        },
      },
    });
    expect(created.status).toBe(201);
  }

  /** A Deployment of `n` replicas whose pods request 100m CPU and 64Mi, without a controller making them. */
  async function deployment(name: string, n: number): Promise<void> {
    await deployments().create({
      metadata: { name },
      spec: {
        replicas: n,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: {
            containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
          },
        },
      },
    } as Deployment);
  }

  /** A pod of the deployment, running and ready for ten minutes (past the CPU initialization period). */
  async function readyPod(name: string, app: string, usage: { cpu: string; memory: string }): Promise<void> {
    const pods = h.client.resource(PodKind, NS);
    const p = await pods.create({
      metadata: { name, labels: { app } },
      spec: {
        nodeName: 'n1',
        containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
      },
    } as Pod);
    const since = new Date(Date.now() - 10 * 60_000).toISOString();
    await pods.updateStatus({
      ...p,
      status: {
        phase: 'Running',
        startTime: since,
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: since }],
      },
    } as Pod);
    metrics.usage.set(name, { labels: { app }, ...usage });
  }

  test('usage above the target scales up, with 1.21 status, conditions and Events', async () => {
    await deployment('web', 2);
    await readyPod('web-0', 'web', { cpu: '80m', memory: '10Mi' });
    await readyPod('web-1', 'web', { cpu: '80m', memory: '10Mi' });
    await hpas().create({
      metadata: { name: 'web' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        minReplicas: 1,
        maxReplicas: 5,
        targetCPUUtilizationPercentage: 50,
      },
    } as HorizontalPodAutoscaler);
    // No metrics API yet: 1.21's condition, and the count kept.
    await waitFor(
      'FailedGetResourceMetric',
      async () =>
        (await condition('web', 'ScalingActive'))?.message ===
        `the HPA was unable to compute the replica count: ${NO_METRICS_ERROR}`,
    );
    expect(await replicas('web')).toBe(2);

    // The metrics server registers after the controller started: discovery finds it.
    await registerMetricsAPI();
    // 80% of the requests against a target of 50%: ceil(2 × 1.6) = 4.
    await waitFor('web scaled to 4', async () => (await replicas('web')) === 4);
    await waitFor('SuccessfulRescale', async () => (await events('web', 'SuccessfulRescale')).length > 0);
    expect(await events('web', 'SuccessfulRescale')).toEqual([
      'New size: 4; reason: cpu resource utilization (percentage of request) above target',
    ]);
    expect(metrics.selectors).toContain('app=web');
    await waitFor('the status of the next sync', async () => {
      const s = (await hpas().get('web')).status;
      return s?.currentReplicas === 4 && s.desiredReplicas === 4;
    });
    const hpa = await hpas().get('web');
    expect(hpa.status).toMatchObject({ currentReplicas: 4, desiredReplicas: 4, currentCPUUtilizationPercentage: 80 });
    expect(hpa.status?.lastScaleTime).toBeDefined();
    const conditions = readConditions(hpa).map(({ type, status, reason, message }) => ({
      type,
      status,
      reason,
      message,
    }));
    expect(conditions).toEqual([
      {
        type: 'AbleToScale',
        status: 'True',
        reason: 'ReadyForNewScale',
        message: 'recommended size matches current size',
      },
      {
        type: 'ScalingActive',
        status: 'True',
        reason: 'ValidMetricFound',
        message:
          'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)',
      },
      {
        type: 'ScalingLimited',
        status: 'False',
        reason: 'DesiredWithinRange',
        message: 'the desired count is within the acceptable range',
      },
    ]);
    // The same autoscaler read as autoscaling/v2beta2.
    const v2 = await h.client.resource(HorizontalPodAutoscalerV2beta2Kind, NS).get('web');
    // (Whether v1 keeps the raw average, 80m a pod, depends on the conversion; the utilization it always keeps.)
    expect(v2.status?.currentMetrics).toEqual([
      { type: 'Resource', resource: { name: 'cpu', current: expect.objectContaining({ averageUtilization: 80 }) } },
    ]);
    expect(v2.status?.conditions?.map((c) => c.reason)).toEqual([
      'ReadyForNewScale',
      'ValidMetricFound',
      'DesiredWithinRange',
    ]);
  });

  test('a v2beta2 AverageValue target, its scale-up limited by the behaviour', async () => {
    await deployment('api', 1);
    await readyPod('api-0', 'api', { cpu: '10m', memory: '300Mi' });
    await h.client.resource(HorizontalPodAutoscalerV2beta2Kind, NS).create({
      metadata: { name: 'api' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'api' },
        minReplicas: 1,
        maxReplicas: 5,
        metrics: [
          { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } },
        ],
        behavior: { scaleUp: { policies: [{ type: 'Pods', value: 1, periodSeconds: 1800 }] } },
      },
    } as HorizontalPodAutoscalerV2beta2);
    // 300Mi against 100Mi: 3 replicas wanted, one pod more per half hour allowed.
    await waitFor('api scaled to 2', async () => (await replicas('api')) === 2);
    await waitFor('SuccessfulRescale', async () => (await events('api', 'SuccessfulRescale')).length > 0);
    expect(await events('api', 'SuccessfulRescale')).toEqual(['New size: 2; reason: memory resource above target']);
    await waitFor('ScaleUpLimit', async () => {
      const c = await condition('api', 'ScalingLimited');
      return c?.status === 'True' && c.reason === 'ScaleUpLimit';
    });
    const v2 = await h.client.resource(HorizontalPodAutoscalerV2beta2Kind, NS).get('api');
    expect(v2.status?.currentMetrics).toEqual([
      { type: 'Resource', resource: { name: 'memory', current: { averageValue: String(300 * 1024 * 1024) } } },
    ]);
    expect(await replicas('api')).toBe(2);
  });

  test('usage below the target scales down once the stabilization window has passed', async () => {
    metrics.usage.set('web-0', { labels: { app: 'web' }, cpu: '10m', memory: '10Mi' });
    metrics.usage.set('web-1', { labels: { app: 'web' }, cpu: '10m', memory: '10Mi' });
    // The recommendations of the window (4) hold the count first.
    await waitFor(
      'ScaleDownStabilized',
      async () => (await condition('web', 'AbleToScale'))?.reason === 'ScaleDownStabilized',
    );
    // 10% against 50%: ceil(2 × 0.2) = 1.
    await waitFor('web scaled to 1', async () => (await replicas('web')) === 1);
    await waitFor('SuccessfulRescale', async () =>
      (await events('web', 'SuccessfulRescale')).includes('New size: 1; reason: All metrics below target'),
    );
    await waitFor('the status', async () => (await hpas().get('web')).status?.currentReplicas === 1);
    expect((await hpas().get('web')).status?.currentCPUUtilizationPercentage).toBe(10);
  });

  test('without the metrics API, ScalingActive is False with FailedGetResourceMetric', async () => {
    const gone = await h.server.request(
      'DELETE',
      '/apis/apiregistration.platform/v1/apiservices/v1beta1.metrics.platform',
    );
    expect(gone.status).toBe(200);
    await waitFor('FailedGetResourceMetric', async () => {
      const c = await condition('web', 'ScalingActive');
      return (
        c?.status === 'False' && c.message === `the HPA was unable to compute the replica count: ${NO_METRICS_ERROR}`
      );
    });
    expect((await condition('web', 'ScalingActive'))?.reason).toBe('FailedGetResourceMetric');
    await waitFor('FailedComputeMetricsReplicas', async () =>
      (await events('web', 'FailedComputeMetricsReplicas')).includes(
        `invalid metrics (1 invalid out of 1), first error is: ${NO_METRICS_ERROR}`,
      ),
    );
    expect(await replicas('web')).toBe(1);
    expect(h.errors).toEqual([]);
  });
});
