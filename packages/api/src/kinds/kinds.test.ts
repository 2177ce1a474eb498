/**
 * Every built-in kind, checked the same way: its Protobuf type builds and round-trips a realistic sample, its
 * OpenAPI definition resolves, structural decoding accepts the sample and rejects wrong nested types with a path.
 */
import { ProtobufCodec } from '../codec/codec';
import { openApiDefinitions } from '../openapi/openapi';
import { decodeInto } from '../schema/decode';
import { fromProto, protoType, toProto } from '../schema/protobuf';
import { SAMPLES } from './testing/samples';
import { BUILTIN_KINDS, builtinScheme } from './index';

const scheme = builtinScheme();
const codec = new ProtobufCodec(scheme);

function key(k: { apiVersion: string; kind: string }): string {
  return `${k.apiVersion}/${k.kind}`;
}

function encode(id: string, value: Record<string, unknown>): Buffer {
  return Buffer.from(protoType(id).encode(toProto(id, value)).finish());
}

function roundTrip(id: string, value: Record<string, unknown>): Record<string, unknown> {
  const type = protoType(id);
  return fromProto(id, type.decode(type.encode(toProto(id, value)).finish()) as unknown as Record<string, unknown>);
}

describe.each(BUILTIN_KINDS.map((k) => [key(k), k] as const))('%s', (name, kind) => {
  const sample = (): Record<string, unknown> => ({
    apiVersion: kind.apiVersion,
    kind: kind.kind,
    ...structuredClone(SAMPLES[name] ?? {}),
  });

  it('has a sample', () => {
    expect(SAMPLES[name]).toBeDefined();
  });

  it('builds the Protobuf types of the kind and its list', () => {
    expect(() => protoType(kind.schema.$id as string)).not.toThrow();
    expect(() => protoType(kind.listSchema.$id as string)).not.toThrow();
  });

  it('accepts its sample unchanged when decoding untrusted input', () => {
    const input = sample();
    const result = decodeInto(kind.schema.$id as string, input);
    expect(result).toEqual({ ok: true, value: sample() });
  });

  it('round-trips the sample through Protobuf, in the envelope and in a list', () => {
    const obj = sample();
    expect(codec.decode(codec.encode(obj))).toEqual(obj);
    const list = {
      apiVersion: kind.apiVersion,
      kind: kind.listKind,
      metadata: { resourceVersion: '7', continue: 'next' },
      items: [SAMPLES[name], SAMPLES[name]],
    };
    expect(codec.decode(codec.encode(list))).toEqual(list);
  });

  it('defaults a partial object without throwing', () => {
    for (const obj of [{}, { metadata: {}, spec: {}, status: {} }]) {
      expect(() => kind.spec.defaults?.(obj as never)).not.toThrow();
    }
  });

  it('keeps the sample when defaulted twice the same way (defaults are idempotent and never throw)', () => {
    const once = sample();
    kind.spec.defaults?.(once as never);
    const twice = structuredClone(once);
    kind.spec.defaults?.(twice as never);
    expect(twice).toEqual(once);
    // Defaulted objects are still structurally valid.
    expect(decodeInto(kind.schema.$id as string, structuredClone(once)).ok).toBe(true);
  });

  it('prints a row of one cell per column without throwing, even for a partial object', () => {
    const columns = kind.spec.columns ?? [];
    const now = Date.parse('2021-04-08T13:00:00Z');
    for (const obj of [sample(), {}, { metadata: {}, spec: {}, status: {} }]) {
      for (const c of columns) expect(() => c.cell(obj as never, now)).not.toThrow();
      for (const read of Object.values(kind.fields)) expect(typeof read(obj as never)).toBe('string');
    }
  });
});

describe('the scheme of built-in kinds', () => {
  it('registers every kind once, with its schema id under its group and version', () => {
    expect(scheme.kinds()).toHaveLength(BUILTIN_KINDS.length);
    for (const k of BUILTIN_KINDS) {
      const prefix = `io.platform.api.${k.group === '' ? 'core' : k.group.replace(/\.platform$/, '')}.${k.version}.`;
      expect(k.schema.$id).toBe(`${prefix}${k.kind}`);
      expect(scheme.kindForResource(k, k.plural)).toBe(k);
    }
  });

  it('serves the Kubernetes 1.21 groups with their preferred versions', () => {
    expect(scheme.groups()).toEqual([
      { name: '', versions: ['v1'] },
      { name: 'apiregistration.platform', versions: ['v1', 'v1beta1'] },
      { name: 'extensions', versions: ['v1beta1'] },
      { name: 'apps', versions: ['v1'] },
      { name: 'events.platform', versions: ['v1', 'v1beta1'] },
      { name: 'authentication.platform', versions: ['v1', 'v1beta1'] },
      { name: 'authorization.platform', versions: ['v1', 'v1beta1'] },
      { name: 'autoscaling', versions: ['v1', 'v2beta2', 'v2beta1'] },
      { name: 'batch', versions: ['v1', 'v1beta1'] },
      { name: 'certificates.platform', versions: ['v1', 'v1beta1'] },
      { name: 'networking.platform', versions: ['v1', 'v1beta1'] },
      { name: 'policy', versions: ['v1', 'v1beta1'] },
      { name: 'rbac.authorization.platform', versions: ['v1', 'v1beta1'] },
      { name: 'storage.platform', versions: ['v1', 'v1beta1'] },
      { name: 'admissionregistration.platform', versions: ['v1', 'v1beta1'] },
      { name: 'apiextensions.platform', versions: ['v1', 'v1beta1'] },
      { name: 'scheduling.platform', versions: ['v1', 'v1beta1'] },
      { name: 'coordination.platform', versions: ['v1', 'v1beta1'] },
      { name: 'node.platform', versions: ['v1', 'v1beta1'] },
      { name: 'discovery.platform', versions: ['v1', 'v1beta1'] },
      { name: 'flowcontrol.apiserver.platform', versions: ['v1beta1'] },
    ]);
  });

  it.each([
    ['pods', '', 'v1', ['po'], ['all'], ['status', 'binding', 'eviction', 'log', 'exec', 'attach', 'portforward']],
    ['namespaces', '', 'v1', ['ns'], [], ['status', 'finalize']],
    ['nodes', '', 'v1', ['no'], [], ['status']],
    ['services', '', 'v1', ['svc'], ['all'], ['status']],
    ['replicationcontrollers', '', 'v1', ['rc'], ['all'], ['status', 'scale']],
    ['deployments', 'apps', 'v1', ['deploy'], ['all'], ['status', 'scale']],
    ['statefulsets', 'apps', 'v1', ['sts'], ['all'], ['status', 'scale']],
    ['cronjobs', 'batch', 'v1beta1', ['cj'], ['all'], ['status']],
    ['certificatesigningrequests', 'certificates.platform', 'v1', ['csr'], [], ['status', 'approval']],
    ['serviceaccounts', '', 'v1', ['sa'], [], ['token']],
  ])('describes %s as discovery does', (plural, group, version, shortNames, categories, subresources) => {
    const k = scheme.kindForResource({ group, version }, plural);
    expect(k?.shortNames).toEqual(shortNames);
    expect(k?.categories).toEqual(categories);
    expect(Object.keys(k?.subresources ?? {})).toEqual(subresources);
  });

  it('marks subresource-only and virtual kinds', () => {
    for (const kind of ['Scale', 'Eviction', 'TokenRequest']) {
      const k = BUILTIN_KINDS.find((x) => x.kind === kind);
      expect(k?.verbs).toEqual([]);
      expect(k?.spec.persisted).toBe(false);
    }
    for (const kind of ['SubjectAccessReview', 'SelfSubjectAccessReview', 'LocalSubjectAccessReview', 'TokenReview']) {
      const k = BUILTIN_KINDS.find((x) => x.kind === kind);
      expect(k?.verbs).toEqual(['create']);
      expect(k?.spec.persisted).toBe(false);
    }
    expect(BUILTIN_KINDS.find((x) => x.kind === 'Binding')?.verbs).toEqual(['create']);
  });
});

describe('OpenAPI definitions of the built-in kinds', () => {
  const defs = openApiDefinitions(scheme);

  it('resolve every reference', () => {
    const refs = JSON.stringify(defs).match(/#\/definitions\/[^"]+/g) ?? [];
    expect(refs.length).toBeGreaterThan(100);
    for (const r of refs) expect(defs[r.slice('#/definitions/'.length)]).toBeDefined();
  });

  it('carry the group-version-kind and a description (kubectl explain) of every kind and list', () => {
    for (const k of BUILTIN_KINDS) {
      expect(defs[k.schema.$id as string]?.description).toMatch(/^[A-Z].{10,}/);
      expect(defs[k.schema.$id as string]?.['x-kubernetes-group-version-kind']).toEqual([
        { group: k.group, version: k.version, kind: k.kind },
      ]);
      expect(defs[k.listSchema.$id as string]?.['x-kubernetes-group-version-kind']).toEqual([
        { group: k.group, version: k.version, kind: k.listKind },
      ]);
    }
  });

  it('carry strategic-merge-patch metadata and flatten embedded structs', () => {
    const spec = defs['io.platform.api.core.v1.PodSpec'] as { properties: Record<string, Record<string, unknown>> };
    expect(spec.properties.containers).toMatchObject({
      'x-kubernetes-patch-merge-key': 'name',
      'x-kubernetes-patch-strategy': 'merge',
    });
    expect(spec.properties.volumes).toMatchObject({
      'x-kubernetes-patch-merge-key': 'name',
      'x-kubernetes-patch-strategy': 'merge,retainKeys',
    });
    const container = defs['io.platform.api.core.v1.Container'] as {
      properties: Record<string, Record<string, unknown>>;
    };
    expect(container.properties.ports).toMatchObject({ 'x-kubernetes-patch-merge-key': 'containerPort' });
    expect(container.properties.volumeMounts).toMatchObject({ 'x-kubernetes-patch-merge-key': 'mountPath' });
    expect(container.properties.env).toMatchObject({ 'x-kubernetes-patch-merge-key': 'name' });
    const volume = defs['io.platform.api.core.v1.Volume'] as { properties: Record<string, unknown> };
    expect(Object.keys(volume.properties)).toEqual(expect.arrayContaining(['name', 'hostPath', 'emptyDir', 'csi']));
    expect(volume.properties).not.toHaveProperty('volumeSource');
    const port = defs['io.platform.api.core.v1.ServicePort'] as { properties: Record<string, unknown> };
    expect(port.properties.targetPort).toMatchObject({ format: 'int-or-string', 'x-kubernetes-int-or-string': true });
  });

  it('describes ClusterRole with exactly the fields of Document 1', () => {
    const role = defs['io.platform.api.rbac.authorization.v1.ClusterRole'] as { properties: Record<string, unknown> };
    expect(Object.keys(role.properties).sort()).toEqual(['aggregationRule', 'apiVersion', 'kind', 'metadata', 'rules']);
    const rule = defs['io.platform.api.rbac.authorization.v1.PolicyRule'] as {
      properties: Record<string, unknown>;
      required: string[];
    };
    expect(Object.keys(rule.properties).sort()).toEqual([
      'apiGroups',
      'nonResourceURLs',
      'resourceNames',
      'resources',
      'verbs',
    ]);
    expect(rule.required).toEqual(['verbs']);
  });
});

describe('Protobuf bytes match the Kubernetes field numbers', () => {
  it('writes Pod.spec(2).containers(2).name(1)', () => {
    expect(encode('io.platform.api.core.v1.Pod', { spec: { containers: [{ name: 'a' }] } })).toEqual(
      Buffer.from([0x12, 0x05, 0x12, 0x03, 0x0a, 0x01, 0x61]),
    );
  });

  it('nests an embedded VolumeSource as Volume field 2, emptyDir as its field 2', () => {
    expect(encode('io.platform.api.core.v1.Volume', { name: 'v', emptyDir: {} })).toEqual(
      Buffer.from([0x0a, 0x01, 0x76, 0x12, 0x02, 0x12, 0x00]),
    );
  });

  it('nests a probe handler as Probe field 1 and writes an IntOrString port as {type, intVal}', () => {
    // Probe.handler(1){ httpGet(2){ port(2){ type(1)=0, intVal(2)=8080 } } }, then periodSeconds(4)=3.
    expect(encode('io.platform.api.core.v1.Probe', { httpGet: { port: 8080 }, periodSeconds: 3 })).toEqual(
      Buffer.from([0x0a, 0x09, 0x12, 0x07, 0x12, 0x05, 0x08, 0x00, 0x10, 0x90, 0x3f, 0x20, 0x03]),
    );
  });

  it('writes a named targetPort as {type: 1, strVal} in ServicePort field 4', () => {
    expect(encode('io.platform.api.core.v1.ServicePort', { port: 80, targetPort: 'http' })).toEqual(
      Buffer.from([0x18, 0x50, 0x22, 0x08, 0x08, 0x01, 0x1a, 0x04, 0x68, 0x74, 0x74, 0x70]),
    );
  });

  it('writes Secret data (2) as map<string, bytes>', () => {
    expect(encode('io.platform.api.core.v1.Secret', { data: { k: Buffer.from([0, 255]).toString('base64') } })).toEqual(
      Buffer.from([0x12, 0x07, 0x0a, 0x01, 0x6b, 0x12, 0x02, 0x00, 0xff]),
    );
  });

  it('writes Node capacity (NodeStatus field 1) as map<string, Quantity>', () => {
    expect(encode('io.platform.api.core.v1.NodeStatus', { capacity: { cpu: '4' } })).toEqual(
      Buffer.from([0x0a, 0x0a, 0x0a, 0x03, 0x63, 0x70, 0x75, 0x12, 0x03, 0x0a, 0x01, 0x34]),
    );
  });

  it('writes an Event eventTime (10) as a MicroTime with nanoseconds', () => {
    // 1970-01-01T00:00:01.000002Z: seconds 1, nanos 2000 (0xd0 0x0f).
    expect(encode('io.platform.api.core.v1.Event', { eventTime: '1970-01-01T00:00:01.000002Z' })).toEqual(
      Buffer.from([0x52, 0x05, 0x08, 0x01, 0x10, 0xd0, 0x0f]),
    );
  });

  it('writes ExtraValue maps as {items} messages (authentication UserInfo.extra = 4)', () => {
    expect(encode('io.platform.api.authentication.v1.UserInfo', { extra: { a: ['x'] } })).toEqual(
      Buffer.from([0x22, 0x08, 0x0a, 0x01, 0x61, 0x12, 0x03, 0x0a, 0x01, 0x78]),
    );
  });

  it('writes EndpointSlice endpoints with the numbers of each version (v1 zone = 7, v1beta1 topology = 5)', () => {
    expect(encode('io.platform.api.discovery.v1.Endpoint', { addresses: ['a'], zone: 'z' })).toEqual(
      Buffer.from([0x0a, 0x01, 0x61, 0x3a, 0x01, 0x7a]),
    );
    expect(encode('io.platform.api.discovery.v1beta1.Endpoint', { topology: { k: 'v' } })).toEqual(
      Buffer.from([0x2a, 0x06, 0x0a, 0x01, 0x6b, 0x12, 0x01, 0x76]),
    );
  });

  it('writes Deployment.spec.replicas (1) even when zero, as a pointer', () => {
    expect(encode('io.platform.api.apps.v1.DeploymentSpec', { replicas: 0 })).toEqual(Buffer.from([0x08, 0x00]));
    expect(roundTrip('io.platform.api.apps.v1.DeploymentSpec', { replicas: 0 })).toEqual({ replicas: 0 });
  });

  it('reads back a non-pointer zero value as unset, as Go omitempty does', () => {
    expect(roundTrip('io.platform.api.core.v1.ContainerStatus', { name: 'c', ready: false, restartCount: 0 })).toEqual({
      name: 'c',
    });
  });
});

describe('structural decoding of nested trees', () => {
  it.each([
    [
      'io.platform.api.core.v1.Pod',
      { spec: { containers: [{ name: 'c', ports: [{ containerPort: '80' }] }] } },
      'spec.containers[0].ports[0].containerPort: must be integer',
    ],
    [
      'io.platform.api.apps.v1.Deployment',
      {
        spec: {
          selector: {},
          template: { spec: { containers: [{ name: 'c', resources: { limits: { cpu: true } } }] } },
        },
      },
      'spec.template.spec.containers[0].resources.limits.cpu: must be string,number',
    ],
    [
      'io.platform.api.core.v1.Pod',
      { spec: { containers: [{ name: 'c' }], restartPolicy: 'Sometimes' } },
      'spec.restartPolicy: must be one of "Always", "OnFailure", "Never"',
    ],
    [
      'io.platform.api.core.v1.Pod',
      { spec: { containers: [{ name: 'c' }], volumes: [{ name: 'v', hostPath: { path: 7 } }] } },
      'spec.volumes[0].hostPath.path: must be string',
    ],
    ['io.platform.api.core.v1.Pod', { spec: {} }, "spec: must have required property 'containers'"],
    [
      'io.platform.api.core.v1.Service',
      { spec: { ports: [{ port: 80, targetPort: 1.5 }] } },
      'spec.ports[0].targetPort: must be integer,string',
    ],
    [
      'io.platform.api.batch.v1beta1.CronJob',
      { spec: { schedule: '@daily', jobTemplate: { spec: { template: {}, backoffLimit: 'six' } } } },
      'spec.jobTemplate.spec.backoffLimit: must be integer',
    ],
    [
      'io.platform.api.core.v1.Event',
      { involvedObject: {}, eventTime: 'yesterday' },
      'eventTime: must be an RFC 3339 time (e.g. "2021-01-01T00:00:00Z")',
    ],
    ['io.platform.api.core.v1.Secret', { data: { k: 'not base64!' } }, 'data.k: must be base64-encoded data'],
  ])('rejects a wrong type in %s with its path', (id, input, message) => {
    const result = decodeInto(id, input);
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.errors).toContain(message);
  });

  it.each([
    [
      'an EndpointSlice of a service without endpoints',
      'io.platform.api.discovery.v1beta1.EndpointSlice',
      { addressType: 'IPv4', endpoints: null },
    ],
    [
      'a TokenRequest for the default audiences',
      'io.platform.api.authentication.v1.TokenRequest',
      { spec: { audiences: null } },
    ],
    ['a LimitRange without limits', 'io.platform.api.core.v1.LimitRange', { spec: { limits: null } }],
    [
      'a SelfSubjectRulesReview answer without rules',
      'io.platform.api.authorization.v1.SelfSubjectRulesReview',
      { spec: {}, status: { resourceRules: null, nonResourceRules: null, incomplete: false } },
    ],
  ])('accepts what Go clients send for %s (nil slices as null)', (_what, id, input) => {
    expect(decodeInto(id, input).ok).toBe(true);
  });

  it('drops unknown fields deep in the tree, as Kubernetes 1.21 does', () => {
    const result = decodeInto<{ spec: { containers: Record<string, unknown>[] } }>('io.platform.api.core.v1.Pod', {
      spec: { containers: [{ name: 'c', bogus: 1 }] },
    });
    expect(result.ok && result.value.spec.containers[0]).toEqual({ name: 'c' });
  });
});
