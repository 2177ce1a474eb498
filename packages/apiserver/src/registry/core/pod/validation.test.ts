import { FieldPath, type FieldError, type PodSpec } from '@platform/api';

import { validatePodSpec, validatePodSpecUpdate, validateResourceRequirements } from './validation';

const show = (errs: FieldError[]): string[] =>
  errs.map((e) => `${e.type} ${e.field}${e.detail ? `: ${e.detail}` : ''}`);

const base = (): PodSpec => ({
  containers: [{ name: 'app', image: 'nginx:1' }],
  restartPolicy: 'Always',
  dnsPolicy: 'ClusterFirst',
});

const spec = new FieldPath('spec');

describe('validatePodSpec', () => {
  const cases: [string, (s: PodSpec) => void, string[]][] = [
    ['a minimal spec', () => {}, []],
    [
      'no containers',
      (s) => {
        s.containers = [];
      },
      ['FieldValueRequired spec.containers'],
    ],
    [
      'duplicate names, missing image, bad name',
      (s) => {
        s.containers = [
          { name: 'app', image: 'x' },
          { name: 'app', image: '' },
          { name: 'Bad_Name', image: ' x' },
        ];
      },
      [
        'FieldValueDuplicate spec.containers[1].name',
        'FieldValueRequired spec.containers[1].image',
        "FieldValueInvalid spec.containers[2].name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        'FieldValueInvalid spec.containers[2].image: must not have leading or trailing whitespace',
      ],
    ],
    [
      'restart and DNS policies',
      (s) => {
        s.restartPolicy = 'Sometimes' as never;
        delete s.dnsPolicy;
      },
      [
        'FieldValueNotSupported spec.restartPolicy: supported values: "Always", "OnFailure", "Never"',
        'FieldValueRequired spec.dnsPolicy',
      ],
    ],
    [
      'ports',
      (s) => {
        s.containers[0]!.ports = [
          { containerPort: 0, protocol: 'TCP' },
          { containerPort: 70000, name: 'http', protocol: 'TCP' },
          { containerPort: 80, name: 'http', protocol: 'UDP', hostPort: -1 },
        ];
      },
      [
        'FieldValueRequired spec.containers[0].ports[0].containerPort',
        'FieldValueInvalid spec.containers[0].ports[1].containerPort: must be between 1 and 65535, inclusive',
        'FieldValueDuplicate spec.containers[0].ports[2].name',
        'FieldValueInvalid spec.containers[0].ports[2].hostPort: must be between 1 and 65535, inclusive',
      ],
    ],
    [
      'env names',
      (s) => {
        s.containers[0]!.env = [{ name: '' }, { name: '1=x' }, { name: 'OK', value: 'v' }];
      },
      [
        'FieldValueRequired spec.containers[0].env[0].name',
        "FieldValueInvalid spec.containers[0].env[1].name: a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')",
      ],
    ],
    [
      'volumes and mounts',
      (s) => {
        s.volumes = [{ name: 'data', emptyDir: {} }, { name: 'data', emptyDir: {} }, { name: 'none' }];
        s.containers[0]!.volumeMounts = [
          { name: 'data', mountPath: '/d' },
          { name: 'data', mountPath: '/d' },
          { name: 'ghost', mountPath: '/g' },
        ];
      },
      [
        'FieldValueDuplicate spec.volumes[1].name',
        'FieldValueRequired spec.volumes[2]: must specify a volume type',
        'FieldValueInvalid spec.containers[0].volumeMounts[1].mountPath: must be unique',
        'FieldValueNotFound spec.containers[0].volumeMounts[2].name',
      ],
    ],
    [
      'probes',
      (s) => {
        s.containers[0]!.livenessProbe = { successThreshold: 2, periodSeconds: -1 };
        s.containers[0]!.readinessProbe = { exec: { command: ['true'] }, tcpSocket: { port: 80 } };
      },
      [
        'FieldValueRequired spec.containers[0].livenessProbe: must specify a handler type',
        'FieldValueInvalid spec.containers[0].livenessProbe.periodSeconds: must be greater than or equal to 0',
        'FieldValueInvalid spec.containers[0].livenessProbe.successThreshold: must be 1',
        'FieldValueForbidden spec.containers[0].readinessProbe.tcpSocket: may not specify more than 1 handler type',
      ],
    ],
    [
      'tolerations',
      (s) => {
        s.tolerations = [
          { operator: 'Equal', value: 'x' },
          { key: 'k', operator: 'Exists', value: 'v' },
          { key: 'k', effect: 'NoSchedule', tolerationSeconds: 5 },
        ];
      },
      [
        'FieldValueInvalid spec.tolerations[0].operator: operator must be Exists when `key` is empty, which means "match all values and all keys"',
        "FieldValueInvalid spec.tolerations[1].operator: value must be empty when `operator` is 'Exists'",
        "FieldValueInvalid spec.tolerations[2].effect: effect must be 'NoExecute' when `tolerationSeconds` is set",
      ],
    ],
    [
      'nodeSelector labels and activeDeadlineSeconds',
      (s) => {
        s.nodeSelector = { 'bad key!': 'v' };
        s.activeDeadlineSeconds = 0;
      },
      [
        "FieldValueInvalid spec.nodeSelector: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        'FieldValueInvalid spec.activeDeadlineSeconds: must be between 1 and 2147483647, inclusive',
      ],
    ],
  ];
  it.each(cases)('%s', (_name, change, expected) => {
    const s = base();
    change(s);
    expect(show(validatePodSpec(s, spec))).toEqual(expected);
  });

  it('reports a missing spec', () => {
    expect(show(validatePodSpec(undefined, spec))).toEqual(['FieldValueRequired spec']);
  });
});

describe('validateResourceRequirements', () => {
  const path = new FieldPath('resources');
  it.each<[string, object, string[]]>([
    [
      'requests within limits',
      { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m', memory: '1024Mi' } },
      [],
    ],
    [
      'a request above its limit',
      { limits: { cpu: '500m' }, requests: { cpu: '0.6' } },
      ['FieldValueInvalid resources.requests[cpu]: must be less than or equal to cpu limit'],
    ],
    [
      'bad names and quantities',
      { limits: { gpu: '1', memory: 'lots' }, requests: { cpu: '-1' } },
      [
        'FieldValueInvalid resources.limits[gpu]: must be a standard resource for containers',
        "FieldValueInvalid resources.limits[memory]: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        'FieldValueInvalid resources.requests[cpu]: must be greater than or equal to 0',
      ],
    ],
    ['extended and hugepages resources', { limits: { 'example.com/gpu': '2', 'hugepages-2Mi': '4Mi' } }, []],
  ])('%s', (_name, r, expected) => {
    expect(show(validateResourceRequirements(r, path))).toEqual(expected);
  });
});

describe('validatePodSpecUpdate', () => {
  it.each<[string, (s: PodSpec) => void, string[]]>([
    ['an image change', (s) => (s.containers[0]!.image = 'nginx:2'), []],
    ['an added toleration', (s) => (s.tolerations = [{ key: 'k', operator: 'Exists' }]), []],
    ['a lowered activeDeadlineSeconds', (s) => (s.activeDeadlineSeconds = 10), []],
    [
      'a raised activeDeadlineSeconds',
      (s) => (s.activeDeadlineSeconds = 100),
      ['FieldValueInvalid spec.activeDeadlineSeconds: must be less than or equal to previous value'],
    ],
    [
      'an added container',
      (s) => s.containers.push({ name: 'b', image: 'x' }),
      ['FieldValueForbidden spec.containers: pod updates may not add or remove containers'],
    ],
    [
      'a changed restart policy',
      (s) => (s.restartPolicy = 'Never'),
      [
        'FieldValueForbidden spec: pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds` or `spec.tolerations` (only additions to existing tolerations)',
      ],
    ],
  ])('%s', (_name, change, expected) => {
    const old = { ...base(), activeDeadlineSeconds: 30 };
    const s = structuredClone(old);
    change(s);
    expect(show(validatePodSpecUpdate(s, old, spec))).toEqual(expected);
  });

  it('forbids removing an existing toleration', () => {
    const old = { ...base(), tolerations: [{ key: 'a', operator: 'Exists' as const }] };
    expect(show(validatePodSpecUpdate({ ...old, tolerations: [] }, old, spec))).toEqual([
      'FieldValueForbidden spec.tolerations: existing toleration can not be modified except its tolerationSeconds',
    ]);
  });
});
