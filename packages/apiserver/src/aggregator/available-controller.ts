/**
 * The availability controller (model: kube-aggregator 1.21 `pkg/controllers/status/available_controller.go`):
 * keeps the `Available` condition of every APIService. A local one is available; a remote one is available when
 * its service exists, listens on the port, has endpoints with addresses on that port (cluster IP services) and
 * answers discovery (`GET /apis/<group>/<version>`, 200 or 403, as `system:kube-aggregator` in `system:masters`).
 * The reasons and messages are 1.21's, so that `kubectl get apiservices` reads the same.
 */
import https from 'node:https';

import { type APIService, type APIServiceCondition } from '@platform/api';

import {
  agentFor,
  type Location,
  type ProxyTls,
  resolveLocation,
  serverNameOf,
  type ServiceLookup,
  type UserHeaders,
  userHeaders,
} from './proxy';

/** The parts of a condition the controller decides (the transition time is kept unless the status changes). */
export type Availability = Pick<APIServiceCondition, 'status' | 'reason' | 'message'>;

/** How the controller reaches an extension server. */
export interface AvailabilityProbe {
  lookup: ServiceLookup;
  useEndpoints: boolean;
  tls: ProxyTls;
  headers: UserHeaders;
  /** Per attempt, ms (Kubernetes: 5 s). */
  timeoutMs: number;
}

/** The availability of one APIService now. */
export async function checkAvailability(a: APIService, probe: AvailabilityProbe): Promise<Availability> {
  const ref = a.spec?.service;
  if (!ref) return { status: 'True', reason: 'Local', message: 'Local APIServices are always available' };
  const namespace = ref.namespace ?? '';
  const name = ref.name ?? '';
  const port = ref.port ?? 443;
  const svc = probe.lookup.service(namespace, name);
  if (!svc)
    return { status: 'False', reason: 'ServiceNotFound', message: `service/${name} in "${namespace}" is not present` };
  if ((svc.spec?.type ?? 'ClusterIP') === 'ClusterIP') {
    const svcPort = (svc.spec?.ports ?? []).find((p) => p.port === port);
    if (!svcPort)
      return {
        status: 'False',
        reason: 'ServicePortError',
        message: `service/${name} in "${namespace}" is not listening on port ${port}`,
      };
    const eps = probe.lookup.endpoints(namespace, name);
    if (!eps)
      return {
        status: 'False',
        reason: 'EndpointsNotFound',
        message: `cannot find endpoints for service/${name} in "${namespace}"`,
      };
    const portName = svcPort.name ?? '';
    const active = (eps.subsets ?? []).some(
      (s) => (s.addresses ?? []).length > 0 && (s.ports ?? []).some((p) => (p.name ?? '') === portName),
    );
    if (!active)
      return {
        status: 'False',
        reason: 'MissingEndpoints',
        message: `endpoints for service/${name} in "${namespace}" have no addresses with port name "${portName}"`,
      };
  }
  // Several attempts at once: one success is enough (a busy server may drop one).
  const errors = await Promise.all([0, 1, 2].map(() => discover(a, probe)));
  const failure = errors.every((e) => e !== undefined) ? errors[errors.length - 1] : undefined;
  if (failure) return { status: 'False', reason: 'FailedDiscoveryCheck', message: failure };
  return { status: 'True', reason: 'Passed', message: 'all checks passed' };
}

/** One discovery request; the error message on failure, undefined on success. */
function discover(a: APIService, probe: AvailabilityProbe): Promise<string | undefined> {
  let location: Location;
  try {
    location = resolveLocation(a, probe.lookup, probe.useEndpoints);
  } catch (err) {
    return Promise.resolve((err as Error).message);
  }
  const url = `https://${location.host}:${location.port}/apis/${a.spec?.group ?? ''}/${a.spec?.version ?? ''}`;
  return new Promise((resolve) => {
    const req = https.get(
      url,
      {
        agent: agentFor(a, probe.tls),
        servername: serverNameOf(a),
        timeout: probe.timeoutMs,
        headers: userHeaders({ name: 'system:kube-aggregator', groups: ['system:masters'] }, probe.headers),
      },
      (res) => {
        res.resume();
        const code = res.statusCode ?? 0;
        resolve(code === 200 || code === 403 ? undefined : `bad status from ${url}: ${code}`);
      },
    );
    req.on('timeout', () => req.destroy(new Error('Client.Timeout exceeded while awaiting headers')));
    req.on('error', (err) => resolve(`failing or missing response from ${url}: ${err.message}`));
  });
}

/** The condition to store: the new availability, with the transition time of the old one if the status is the same. */
export function nextCondition(old: APIServiceCondition | undefined, a: Availability, now: number): APIServiceCondition {
  const time =
    old && old.status === a.status && old.lastTransitionTime
      ? old.lastTransitionTime
      : new Date(Math.floor(now / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  return { type: 'Available', ...a, lastTransitionTime: time };
}
