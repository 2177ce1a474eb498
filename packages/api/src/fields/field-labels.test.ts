import { BUILTIN_FIELD_LABELS, convertFieldSelectorForKind, fieldLabelTransform, fieldsOfObject } from './field-labels';
import { isFieldSelectorParseError, parseAndTransformFieldSelector, parseFieldSelector } from './selector';

function rejection(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(isFieldSelectorParseError(err)).toBe(true);
    return (err as Error).message;
  }
  throw new Error('not rejected');
}

describe('fieldLabelTransform', () => {
  it.each<[string, string, boolean, string, string]>([
    ['', 'Pod', true, 'spec.nodeName=n1,status.phase=Running', 'spec.nodeName=n1,status.phase=Running'],
    ['', 'Pod', true, 'spec.host=n1', 'spec.nodeName=n1'],
    ['', 'Pod', true, 'metadata.namespace=default,metadata.name=p', 'metadata.name=p,metadata.namespace=default'],
    ['', 'Node', false, 'spec.unschedulable=false', 'spec.unschedulable=false'],
    ['', 'Event', true, 'involvedObject.name=x,type=Warning', 'involvedObject.name=x,type=Warning'],
    ['', 'Secret', true, 'type=kubernetes.io/tls', 'type=kubernetes.io/tls'],
    ['apps', 'ReplicaSet', true, 'status.replicas!=0', 'status.replicas!=0'],
    ['batch', 'Job', true, 'status.successful=1', 'status.successful=1'],
    ['', 'ConfigMap', true, 'metadata.name=a', 'metadata.name=a'],
  ])('%s/%s accepts %j', (group, kind, namespaced, input, want) => {
    expect(parseAndTransformFieldSelector(input, fieldLabelTransform(group, kind, namespaced)).toString()).toBe(want);
  });

  it.each<[string, string, boolean, string, string]>([
    ['', 'Pod', true, 'spec.foo=x', 'field label not supported: spec.foo'],
    ['', 'Node', false, 'metadata.namespace=x', 'field label not supported: metadata.namespace'],
    ['', 'ConfigMap', true, 'data.key=x', 'field label not supported: data.key'],
    ['apps', 'Deployment', true, 'status.replicas=1', 'field label not supported: status.replicas'],
    ['', 'Pod', true, 'metadata.name =x', 'field label not supported: metadata.name '],
  ])('%s/%s rejects %j', (group, kind, namespaced, input, msg) => {
    expect(rejection(() => parseAndTransformFieldSelector(input, fieldLabelTransform(group, kind, namespaced)))).toBe(
      msg,
    );
    expect(rejection(() => convertFieldSelectorForKind(parseFieldSelector(input), group, kind, namespaced))).toBe(msg);
  });

  it('accepts a custom support table', () => {
    const t = fieldLabelTransform('example.com', 'Widget', false, {
      fields: ['spec.color'],
      renames: { color: 'spec.color' },
    });
    expect(parseAndTransformFieldSelector('color=red', t).toString()).toBe('spec.color=red');
  });

  it('lists the core kinds of Kubernetes', () => {
    expect(Object.keys(BUILTIN_FIELD_LABELS)).toEqual(
      expect.arrayContaining(['/Pod', '/Node', '/Event', '/Namespace', '/Secret', 'apps/ReplicaSet', 'batch/Job']),
    );
  });
});

describe('fieldsOfObject', () => {
  it('extracts pod fields as Kubernetes does', () => {
    const pod = {
      metadata: { name: 'p', namespace: 'ns' },
      spec: { nodeName: 'n1', restartPolicy: 'Always', schedulerName: 'default-scheduler' },
      status: { phase: 'Running', podIPs: [{ ip: '10.0.0.1' }] },
    };
    expect(fieldsOfObject(pod, '', 'Pod', true)).toEqual({
      'metadata.name': 'p',
      'metadata.namespace': 'ns',
      'spec.nodeName': 'n1',
      'spec.restartPolicy': 'Always',
      'spec.schedulerName': 'default-scheduler',
      'spec.serviceAccountName': '',
      'status.phase': 'Running',
      'status.podIP': '10.0.0.1',
      'status.podIPs': '',
      'status.nominatedNodeName': '',
    });
    expect(fieldsOfObject({ status: { podIP: '10.0.0.2' } }, '', 'Pod', true)['status.podIP']).toBe('10.0.0.2');
  });

  it('applies Kubernetes defaults and renamed sources', () => {
    expect(fieldsOfObject({ metadata: { name: 'n' } }, '', 'Node', false)).toEqual({
      'metadata.name': 'n',
      'spec.unschedulable': 'false',
    });
    expect(fieldsOfObject({ spec: { unschedulable: true } }, '', 'Node', false)['spec.unschedulable']).toBe('true');
    expect(fieldsOfObject({}, 'apps', 'ReplicaSet', true)['status.replicas']).toBe('0');
    expect(fieldsOfObject({ status: { replicas: 3 } }, '', 'ReplicationController', true)['status.replicas']).toBe('3');
    expect(fieldsOfObject({ status: { succeeded: 2 } }, 'batch', 'Job', true)['status.successful']).toBe('2');
    expect(fieldsOfObject({ source: { component: 'kubelet' } }, '', 'Event', true)['source']).toBe('kubelet');
    expect(fieldsOfObject({ reportingComponent: 'ctrl' }, '', 'Event', true)['source']).toBe('ctrl');
    expect(fieldsOfObject({ reportingComponent: 'ctrl' }, '', 'Event', true)['reportingComponent']).toBe('ctrl');
    expect(fieldsOfObject({ type: 'Opaque' }, '', 'Secret', true)['type']).toBe('Opaque');
  });

  it('tolerates malformed objects', () => {
    expect(fieldsOfObject(null, '', 'Pod', true)['spec.nodeName']).toBe('');
    expect(fieldsOfObject({ spec: 'x' }, '', 'Pod', true)['spec.nodeName']).toBe('');
    expect(fieldsOfObject({ metadata: { name: 5 } }, '', 'ConfigMap', true)).toEqual({
      'metadata.name': '5',
      'metadata.namespace': '',
    });
  });

  it('matches a selector end to end (the node agent’s spec.nodeName filter)', () => {
    const sel = convertFieldSelectorForKind(parseFieldSelector('spec.nodeName=n1'), '', 'Pod', true);
    expect(sel.matches(fieldsOfObject({ spec: { nodeName: 'n1' } }, '', 'Pod', true))).toBe(true);
    expect(sel.matches(fieldsOfObject({ spec: { nodeName: 'n2' } }, '', 'Pod', true))).toBe(false);
    expect(sel.requiresExactMatch('spec.nodeName')).toBe('n1');
  });
});
