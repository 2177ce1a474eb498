/**
 * Unit tests of the admission machinery and of the plugins that need no store: plugin selection and order, the
 * configuration file, the chain's phases and reinvocation, and the pure plugins (tolerations, taints, image pull
 * policy, external IPs, event rate limits, node labels, webhook rule matching, quota usage).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type ApiObject, builtinScheme, isStatusError, type Kind } from '@platform/api';

import { testLogger } from '../testing/test-server';
import { AdmissionChain, attributesFor } from './chain';
import { parseAdmissionConfig, readAdmissionConfigFile } from './config';
import { type AdmissionAttributes, type AdmissionPlugin, type PluginInitContext } from './interfaces';
import { type InternalClient } from './internal-client';
import { AlwaysAdmitPlugin } from './plugins/always-admit';
import { AlwaysDenyPlugin } from './plugins/always-deny';
import { AlwaysPullImagesPlugin } from './plugins/always-pull-images';
import { DefaultTolerationSecondsPlugin } from './plugins/default-toleration-seconds';
import { DenyServiceExternalIPsPlugin } from './plugins/deny-service-external-ips';
import { EventRateLimitPlugin, parseEventRateLimitConfig } from './plugins/event-rate-limit';
import { ExtendedResourceTolerationPlugin } from './plugins/extended-resource-toleration';
import { LimitPodHardAntiAffinityTopologyPlugin } from './plugins/limit-pod-hard-anti-affinity-topology';
import { nodeMaySetLabel } from './plugins/node-restriction';
import { parsePodNodeSelectorConfig } from './plugins/pod-node-selector';
import { quotaCovers, usageOf } from './plugins/resource-quota';
import { SecurityContextDenyPlugin } from './plugins/security-context-deny';
import { TaintNodesByConditionPlugin } from './plugins/taint-nodes-by-condition';
import { ALL_ORDERED_PLUGINS, buildAdmissionChain, DEFAULT_ENABLED_PLUGINS, enabledPlugins } from './registry';
import { DEFAULT_ADMISSION_SETTINGS } from './server-admission';
import { ruleMatches } from './webhook/matching';
import { WebhookPlugin } from './webhook/plugin';
import { parseReviewResponse, buildReview } from './webhook/review';

const scheme = builtinScheme();
const kindOf = (group: string, kind: string): Kind => {
  const k = scheme.kinds().find((x) => x.group === group && x.kind === kind);
  if (!k) throw new Error(`no kind ${kind}`);
  return k;
};

type Op = AdmissionAttributes['operation'];

/** Attributes of a request on a main resource of `kind`. */
function attrs(kind: Kind, op: Op, obj?: object, old?: object, o: { namespace?: string; dryRun?: boolean } = {}) {
  return attributesFor(
    { namespace: o.namespace ?? (kind.namespaced ? 'ns' : ''), now: () => 0 },
    op,
    obj as ApiObject | undefined,
    old as ApiObject | undefined,
    {
      kind,
      resourceKind: kind,
      resource: kind.plural,
      subresource: '',
    } as Parameters<typeof attributesFor>[4],
    o.dryRun ?? false,
  );
}

async function refusal(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p;
  } catch (err) {
    if (isStatusError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('admitted');
}

describe('plugin selection', () => {
  it('runs the defaults of Document 2 in Kubernetes order', () => {
    const on = enabledPlugins([], []);
    expect([...on].sort()).toEqual([...DEFAULT_ENABLED_PLUGINS].sort());
    expect(on).toEqual(ALL_ORDERED_PLUGINS.filter((n) => on.includes(n)));
    expect(on.slice(-3)).toEqual(['MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook', 'ResourceQuota']);
  });

  it('adds and removes plugins whatever the order of the options', () => {
    const on = enabledPlugins(['AlwaysPullImages', 'NodeRestriction'], ['ResourceQuota', 'LimitRanger']);
    expect(on).toContain('AlwaysPullImages');
    expect(on.indexOf('NodeRestriction')).toBeLessThan(on.indexOf('AlwaysPullImages'));
    expect(on).not.toContain('ResourceQuota');
    expect(on).not.toContain('LimitRanger');
  });

  it('stops on unknown plugin names, naming them and the known ones', () => {
    expect(() => enabledPlugins(['NoSuchPlugin'], [])).toThrow(
      /^unknown admission plugin: NoSuchPlugin; known plugins: AlwaysAdmit, /,
    );
    expect(() => enabledPlugins([], ['Nope', 'Other'])).toThrow(/^unknown admission plugins: Nope, Other;/);
    expect(() => enabledPlugins(['AlwaysDeny'], ['AlwaysDeny'])).toThrow('both enabled and disabled: AlwaysDeny');
  });

  it('says in the log which enabled plugins are inactive because their kinds do not exist yet', () => {
    const warnings: unknown[] = [];
    const logger = { ...testLogger(), warn: (msg: string, fields?: object) => warnings.push({ msg, ...fields }) };
    const client = {} as InternalClient;
    const init: Omit<PluginInitContext, 'config'> = {
      client,
      logger,
      settings: DEFAULT_ADMISSION_SETTINGS,
      scheme,
      now: () => 0,
    };
    const chain = buildAdmissionChain({ plugins: enabledPlugins([], []), logger }, init);
    expect(chain.names()).toEqual([
      'NamespaceLifecycle',
      'LimitRanger',
      'ServiceAccount',
      'TaintNodesByCondition',
      'Priority',
      'DefaultTolerationSeconds',
      'DefaultStorageClass',
      'StorageObjectInUseProtection',
      'PersistentVolumeClaimResize',
      'RuntimeClass',
      'CertificateApproval',
      'CertificateSigning',
      'CertificateSubjectRestriction',
      'DefaultIngressClass',
      'MutatingAdmissionWebhook',
      'ValidatingAdmissionWebhook',
      'ResourceQuota',
    ]);
    // Every default plugin is active now; an enabled one that is not implemented says so.
    expect(warnings).toEqual([]);
    buildAdmissionChain({ plugins: enabledPlugins(['ImagePolicyWebhook'], []), logger }, init);
    expect(warnings).toContainEqual({
      msg: 'Admission plugin enabled but inactive: it admits everything',
      plugin: 'ImagePolicyWebhook',
      reason: 'not implemented yet (needs its webhook configuration and ImageReview)',
    });
    expect(() => buildAdmissionChain({ plugins: ['EventRateLimit'], logger }, init)).toThrow(
      'admission plugin EventRateLimit: EventRateLimit: a configuration with limits is required',
    );
  });
});

describe('the admission configuration file', () => {
  it('reads inline configurations and configurations from relative paths', () => {
    const dir = mkdtempSync(join(tmpdir(), 'admission-config-'));
    writeFileSync(join(dir, 'events.yaml'), 'kind: Configuration\nlimits:\n- type: Server\n  qps: 5\n  burst: 10\n');
    writeFileSync(
      join(dir, 'admission.yaml'),
      [
        'apiVersion: apiserver.config.platform/v1',
        'kind: AdmissionConfiguration',
        'plugins:',
        '- name: EventRateLimit',
        '  path: events.yaml',
        '- name: PodNodeSelector',
        '  configuration:',
        '    podNodeSelectorPluginConfig:',
        '      clusterDefaultNodeSelector: zone=a',
      ].join('\n'),
    );
    const c = readAdmissionConfigFile(join(dir, 'admission.yaml'));
    expect(parseEventRateLimitConfig(c.get('EventRateLimit'))).toEqual([
      { type: 'Server', qps: 5, burst: 10, cacheSize: 1 },
    ]);
    expect(parsePodNodeSelectorConfig(c.get('PodNodeSelector')).clusterDefaultNodeSelector).toBe('zone=a');
  });

  it.each([
    ['not: [valid', /not valid YAML or JSON/],
    ['kind: Other\napiVersion: apiserver.config.platform/v1', /kind must be AdmissionConfiguration/],
    ['kind: AdmissionConfiguration\napiVersion: v9', /unsupported apiVersion "v9"/],
    ['kind: AdmissionConfiguration\napiVersion: apiserver.config.platform/v1\nplugins: {}', /plugins must be a list/],
    [
      'kind: AdmissionConfiguration\napiVersion: apiserver.config.platform/v1\nplugins:\n- name: X\n  path: missing.yaml',
      /plugins\[0\]\.path: cannot read/,
    ],
  ])('refuses %j clearly', (text, message) => {
    expect(() => parseAdmissionConfig(text, '/tmp/admission.yaml')).toThrow(message);
  });

  it('refuses a missing file with the option name', () => {
    expect(() => readAdmissionConfigFile('/nonexistent/admission.yaml')).toThrow(
      /^--admission-control-config-file: cannot read \/nonexistent\/admission.yaml/,
    );
  });
});

describe('the chain', () => {
  const configMaps = kindOf('', 'ConfigMap');
  const recorder = (
    name: string,
    log: string[],
    change?: (o: ApiObject) => void,
    reinvocable = false,
  ): AdmissionPlugin => ({
    name,
    handles: () => true,
    admit: async (a) => {
      log.push(`admit:${name}`);
      if (a.object && change) change(a.object);
      return reinvocable; // a reinvocable plugin asks for reinvocation
    },
    validate: async () => {
      log.push(`validate:${name}`);
    },
    ...(reinvocable
      ? {
          reinvoke: async () => {
            log.push(`reinvoke:${name}`);
            return false;
          },
        }
      : {}),
  });

  it('runs mutating plugins in order, then validating ones in order', async () => {
    const log: string[] = [];
    const chain = new AdmissionChain([recorder('a', log), recorder('b', log)]);
    const scope = { kind: configMaps, resourceKind: configMaps, resource: 'configmaps', subresource: '' };
    const ctx = { namespace: 'ns', now: () => 0 };
    await chain.admit(ctx, 'CREATE', { metadata: { name: 'x' } }, undefined, scope as never, false);
    await chain.validate(ctx, 'CREATE', { metadata: { name: 'x' } }, undefined, scope as never, false);
    expect(log).toEqual(['admit:a', 'admit:b', 'validate:a', 'validate:b']);
  });

  it('reinvokes a reinvocable plugin once when a later plugin changed the object', async () => {
    const log: string[] = [];
    const chain = new AdmissionChain([
      recorder('hooks', log, undefined, true),
      recorder('later', log, (o) => ((o.metadata ??= {}).labels = { changed: 'yes' })),
    ]);
    const scope = { kind: configMaps, resourceKind: configMaps, resource: 'configmaps', subresource: '' };
    await chain.admit({ namespace: 'ns', now: () => 0 }, 'CREATE', { metadata: {} }, undefined, scope as never, false);
    expect(log).toEqual(['admit:hooks', 'admit:later', 'reinvoke:hooks']);
  });

  it('does not reinvoke a reinvocable plugin whose admit did not ask for it', async () => {
    const log: string[] = [];
    const hooks = recorder('hooks', log, undefined, true);
    const chain = new AdmissionChain([
      { ...hooks, admit: async (a) => void (await hooks.admit!(a)) },
      recorder('later', log, (o) => ((o.metadata ??= {}).labels = { changed: 'yes' })),
    ]);
    const scope = { kind: configMaps, resourceKind: configMaps, resource: 'configmaps', subresource: '' };
    await chain.admit({ namespace: 'ns', now: () => 0 }, 'CREATE', { metadata: {} }, undefined, scope as never, false);
    expect(log).toEqual(['admit:hooks', 'admit:later']);
  });

  it('AlwaysAdmit admits everything', async () => {
    const p = new AlwaysAdmitPlugin();
    await p.admit();
    await p.validate();
    expect(p.handles()).toBe(true);
  });

  it('AlwaysDeny refuses with 403', async () => {
    const r = await refusal(new AlwaysDenyPlugin().validate(attrs(configMaps, 'CREATE', { metadata: { name: 'x' } })));
    expect(r).toEqual({
      code: 403,
      message: 'configmaps "x" is forbidden: admission control is denying all modifications',
    });
  });
});

describe('pure plugins', () => {
  const pods = kindOf('', 'Pod');
  const nodes = kindOf('', 'Node');
  const services = kindOf('', 'Service');

  it('DefaultTolerationSeconds adds what the pod lacks, with the configured seconds', async () => {
    const p = new DefaultTolerationSecondsPlugin(60, 90);
    const pod = {
      metadata: { name: 'p' },
      spec: {
        containers: [],
        tolerations: [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' }],
      },
    };
    await p.admit(attrs(pods, 'CREATE', pod));
    expect(pod.spec.tolerations).toEqual([
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 },
    ]);
    const tolerant = { metadata: {}, spec: { containers: [], tolerations: [{ operator: 'Exists' }] } };
    await p.admit(attrs(pods, 'CREATE', tolerant));
    expect(tolerant.spec.tolerations).toEqual([{ operator: 'Exists' }]);
  });

  it('TaintNodesByCondition taints a new node not-ready, once', async () => {
    const node = {
      metadata: { name: 'n' },
      spec: { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] },
    };
    await new TaintNodesByConditionPlugin().admit(attrs(nodes, 'CREATE', node));
    expect(node.spec.taints).toEqual([{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
  });

  it('AlwaysPullImages sets and requires imagePullPolicy Always', async () => {
    const p = new AlwaysPullImagesPlugin();
    const pod = {
      metadata: { name: 'p' },
      spec: {
        initContainers: [{ name: 'i', image: 'x', imagePullPolicy: 'Never' }],
        containers: [{ name: 'c', image: 'x', imagePullPolicy: 'IfNotPresent' }],
      },
    };
    await p.admit(attrs(pods, 'CREATE', pod));
    expect([pod.spec.initContainers[0]?.imagePullPolicy, pod.spec.containers[0]?.imagePullPolicy]).toEqual([
      'Always',
      'Always',
    ]);
    pod.spec.containers[0]!.imagePullPolicy = 'Never';
    const r = await refusal(p.validate(attrs(pods, 'UPDATE', pod, pod)));
    expect(r.code).toBe(403);
    expect(r.message).toContain('spec.containers[0].imagePullPolicy: Unsupported value: "Never"');
  });

  it('SecurityContextDeny refuses pods that choose their user or SELinux context', async () => {
    const p = new SecurityContextDenyPlugin();
    await p.validate(attrs(pods, 'CREATE', { metadata: { name: 'p' }, spec: { containers: [{ name: 'c' }] } }));
    const r = await refusal(
      p.validate(
        attrs(pods, 'CREATE', { metadata: { name: 'p' }, spec: { securityContext: { runAsUser: 0 }, containers: [] } }),
      ),
    );
    expect(r).toEqual({ code: 403, message: 'pods "p" is forbidden: pod.Spec.SecurityContext.RunAsUser is forbidden' });
  });

  it('LimitPodHardAntiAffinityTopology allows only the hostname topology in required anti-affinity', async () => {
    const p = new LimitPodHardAntiAffinityTopologyPlugin();
    const pod = (topologyKey: string): object => ({
      metadata: { name: 'p' },
      spec: {
        containers: [],
        affinity: {
          podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: {}, topologyKey }] },
        },
      },
    });
    await p.validate(attrs(pods, 'CREATE', pod('kubernetes.io/hostname')));
    expect((await refusal(p.validate(attrs(pods, 'CREATE', pod('topology.kubernetes.io/zone'))))).message).toBe(
      'pods "p" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey topology.kubernetes.io/zone but only key kubernetes.io/hostname is allowed',
    );
  });

  it('ExtendedResourceToleration tolerates the taints of requested extended resources', async () => {
    const pod = {
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', resources: { limits: { 'example.com/gpu': '1', cpu: '1' } } }] },
    } as { spec: { tolerations?: unknown[] } } & object;
    await new ExtendedResourceTolerationPlugin().admit(attrs(pods, 'CREATE', pod));
    expect(pod.spec.tolerations).toEqual([{ key: 'example.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
  });

  it('DenyServiceExternalIPs refuses new external IPs and lets an update keep or drop old ones', async () => {
    const p = new DenyServiceExternalIPsPlugin();
    const svc = (ips: string[]): object => ({ metadata: { name: 's' }, spec: { externalIPs: ips } });
    expect((await refusal(p.validate(attrs(services, 'CREATE', svc(['1.1.1.1']))))).code).toBe(403);
    await p.validate(attrs(services, 'UPDATE', svc(['1.1.1.1']), svc(['1.1.1.1', '2.2.2.2'])));
    expect((await refusal(p.validate(attrs(services, 'UPDATE', svc(['3.3.3.3']), svc(['1.1.1.1']))))).code).toBe(403);
  });

  it('EventRateLimit refills its buckets with time (injected clock) and limits per user', async () => {
    let now = 0;
    const p = new EventRateLimitPlugin(
      parseEventRateLimitConfig({ limits: [{ type: 'User', qps: 2, burst: 2 }] }),
      () => now,
    );
    const events = kindOf('', 'Event');
    const a = (user: string): AdmissionAttributes => ({
      ...attrs(events, 'CREATE', { metadata: { name: 'e' } }),
      user: { name: user, groups: [] },
    });
    await p.validate(a('u'));
    await p.validate(a('u'));
    const r = await refusal(p.validate(a('u')));
    expect(r).toEqual({ code: 429, message: 'limit reached on type User for key u' });
    await p.validate(a('someone-else'));
    now += 500; // one token at 2 qps
    await p.validate(a('u'));
    expect((await refusal(p.validate(a('u')))).code).toBe(429);
  });

  it('EventRateLimit refuses malformed configuration clearly', () => {
    expect(() => parseEventRateLimitConfig({ limits: [{ type: 'Planet', qps: 1, burst: 1 }] })).toThrow(
      'EventRateLimit: limits[0].type: must be one of Server, Namespace, User, SourceAndObject, got "Planet"',
    );
    expect(() => parseEventRateLimitConfig({ limits: [{ type: 'Server', qps: 0, burst: 1 }] })).toThrow(
      'limits[0].qps: must be an integer of at least 1',
    );
  });

  it.each([
    ['kubernetes.io/hostname', true],
    ['example.com/rack', true],
    ['plain', true],
    ['node.kubernetes.io/instance-type', true],
    ['kubelet.kubernetes.io/x', true],
    ['node-role.kubernetes.io/master', false],
    ['node-restriction.kubernetes.io/x', false],
    ['node-role.platform/master', false],
    ['foo.k8s.io/x', false],
  ])('NodeRestriction: a node may set label %s: %s', (key, allowed) => {
    expect(nodeMaySetLabel(key)).toBe(allowed);
  });
});

describe('webhook rules and reviews', () => {
  const pods = kindOf('', 'Pod');
  const rule = (resources: string[], extra: object = {}): Parameters<typeof ruleMatches>[0] => ({
    operations: ['CREATE'],
    apiGroups: [''],
    apiVersions: ['v1'],
    resources,
    ...extra,
  });
  const sub = (subresource: string): AdmissionAttributes => ({ ...attrs(pods, 'CREATE', {}), subresource });

  it.each([
    [['pods'], '', true],
    [['pods'], 'status', false],
    [['pods/*'], 'status', true],
    [['pods/*'], '', true],
    [['*'], '', true],
    [['*'], 'binding', false],
    [['*/binding'], 'binding', true],
    [['*/*'], 'eviction', true],
    [['services'], '', false],
  ])('resources %j match a pods request with subresource %j: %s', (resources, subresource, matches) => {
    expect(ruleMatches(rule(resources), sub(subresource))).toBe(matches);
  });

  it('matches operations, groups, versions and scope', () => {
    const a = attrs(pods, 'CREATE', {});
    expect(ruleMatches(rule(['pods'], { operations: ['UPDATE'] }), a)).toBe(false);
    expect(ruleMatches(rule(['pods'], { operations: ['*'] }), a)).toBe(true);
    expect(ruleMatches(rule(['pods'], { apiGroups: ['apps'] }), a)).toBe(false);
    expect(ruleMatches(rule(['pods'], { apiVersions: ['v2'] }), a)).toBe(false);
    expect(ruleMatches(rule(['pods'], { apiVersions: ['v2'] }), a, true)).toBe(true);
    expect(ruleMatches(rule(['pods'], { scope: 'Cluster' }), a)).toBe(false);
    expect(ruleMatches(rule(['pods'], { scope: 'Namespaced' }), a)).toBe(true);
  });

  it('checks what a webhook answers', () => {
    const review = buildReview(attrs(pods, 'CREATE', { metadata: { name: 'p' } }, undefined, { dryRun: true }), 'v1');
    expect(review.request).toMatchObject({
      operation: 'CREATE',
      dryRun: true,
      options: { kind: 'CreateOptions', dryRun: ['All'] },
    });
    const ok = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: review.request.uid, allowed: true },
    };
    expect(parseReviewResponse(ok, review, false)).toEqual({ allowed: true });
    expect(() => parseReviewResponse({ ...ok, apiVersion: 'admission.platform/v1beta1' }, review, false)).toThrow(
      /expected response of kind AdmissionReview in admission.platform\/v1/,
    );
    expect(() =>
      parseReviewResponse({ ...ok, response: { uid: review.request.uid, allowed: 'yes' } }, review, false),
    ).toThrow('response.allowed must be a boolean');
    expect(() =>
      parseReviewResponse(
        { ...ok, response: { uid: review.request.uid, allowed: true, patchType: 'JSONPatch', patch: 'W10=' } },
        review,
        false,
      ),
    ).toThrow('a validating webhook may not return a patch');
    expect(() => parseReviewResponse([], review, true)).toThrow('not a JSON object');
  });
});

describe('quota usage', () => {
  const pods = { group: '', resource: 'pods' };
  it('counts a pod by its containers, the largest init container, and not once it has finished', () => {
    const pod = {
      metadata: {},
      spec: {
        initContainers: [{ name: 'i', resources: { requests: { cpu: '2' } } }],
        containers: [
          { name: 'a', resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { memory: '2Gi' } } },
          { name: 'b', resources: { requests: { cpu: '500m' } } },
        ],
      },
    } as ApiObject;
    const u = Object.fromEntries([...usageOf(pods, pod)].map(([k, v]) => [k, v.toString()]));
    expect(u).toEqual({
      pods: '1',
      'count/pods': '1',
      'requests.cpu': '2',
      cpu: '2',
      'requests.memory': '1Gi',
      memory: '1Gi',
      'limits.memory': '2Gi',
    });
    expect(usageOf(pods, { ...pod, status: { phase: 'Succeeded' } } as ApiObject).size).toBe(0);
    const u2 = usageOf({ group: 'apps', resource: 'deployments' }, { metadata: {} });
    expect([...u2.keys()]).toEqual(['count/deployments.apps']);
  });

  it('applies scoped quotas only to the pods they select', () => {
    const q = (scopes: string[]): never => ({ spec: { hard: { pods: '1' }, scopes } }) as never;
    const bestEffort = { metadata: {}, spec: { containers: [{ name: 'c' }] } } as ApiObject;
    const terminating = { metadata: {}, spec: { activeDeadlineSeconds: 5, containers: [] } } as ApiObject;
    expect(quotaCovers(q(['BestEffort']), pods, bestEffort)).toBe(true);
    expect(quotaCovers(q(['NotBestEffort']), pods, bestEffort)).toBe(false);
    expect(quotaCovers(q(['Terminating']), pods, terminating)).toBe(true);
    expect(quotaCovers(q(['NotTerminating']), pods, terminating)).toBe(false);
    expect(quotaCovers(q(['BestEffort']), { group: '', resource: 'services' }, {})).toBe(false);
    const byClass = {
      spec: {
        hard: { pods: '1' },
        scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] },
      },
    } as never;
    expect(quotaCovers(byClass, pods, { metadata: {}, spec: { priorityClassName: 'high' } } as ApiObject)).toBe(true);
    expect(quotaCovers(byClass, pods, { metadata: {}, spec: {} } as ApiObject)).toBe(false);
  });
});

describe('webhooks and dry-run', () => {
  // v1 validation keeps Unknown and Some out of the store, so configurations stored before (or written by another
  // version) are the only way a webhook with side effects exists; a client that lists one stands in for them here.
  const hooks = (sideEffects: string): InternalClient =>
    ({
      has: () => true,
      get: async () => undefined,
      list: async () => [
        {
          metadata: { name: 'c' },
          webhooks: [
            {
              name: 'effects.test.example.com',
              clientConfig: { url: 'https://127.0.0.1:1/never-called' },
              rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }],
              sideEffects,
              admissionReviewVersions: ['v1'],
              failurePolicy: 'Ignore',
            },
          ],
        },
      ],
    }) as unknown as InternalClient;
  const configMaps = kindOf('', 'ConfigMap');

  it.each(['Unknown', 'Some'])('refuses a dry-run that would reach a webhook with side effects %s', async (effects) => {
    const p = new WebhookPlugin(false, hooks(effects), testLogger(), undefined);
    const r = await refusal(
      p.validate(attrs(configMaps, 'CREATE', { metadata: { name: 'x' } }, undefined, { dryRun: true })),
    );
    expect(r).toEqual({ code: 400, message: 'admission webhook "effects.test.example.com" does not support dry run' });
  });
});
