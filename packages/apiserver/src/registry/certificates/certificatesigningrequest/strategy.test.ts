import {
  type CertificateSigningRequest,
  CertificateSigningRequestKind,
  CertificateSigningRequestV1beta1Kind,
  type FieldError,
  SIGNER_NAMES,
} from '@platform/api';
import { createCertificateRequest } from '@platform/common';

import { FieldPath } from '@platform/api';
import { type RequestContext } from '../../rest/rest';
import { csrApprovalStrategy, csrStatusStrategy, csrStrategy, defaultSignerName } from './strategy';
import { validateSignerName } from './validation';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}: ${e.detail}`);
const b64 = (s: string): string => Buffer.from(s).toString('base64');
const ctx: RequestContext = {
  namespace: '',
  now: () => Date.parse('2021-04-08T12:00:00Z'),
  user: { name: 'alice', uid: 'u-1', groups: ['devs', 'system:authenticated'], extra: { scope: ['a'] } },
};

let nodeClient: string;
let nodeServing: string;
let plain: string;
beforeAll(async () => {
  nodeClient = b64(
    (await createCertificateRequest({ commonName: 'system:node:n1', organizations: ['system:nodes'] })).csrPem,
  );
  nodeServing = b64(
    (
      await createCertificateRequest({
        commonName: 'system:node:n1',
        organizations: ['system:nodes'],
        dnsNames: ['n1.local'],
      })
    ).csrPem,
  );
  plain = b64((await createCertificateRequest({ commonName: 'alice' })).csrPem);
});

function csr(spec: Partial<CertificateSigningRequest['spec']>, status?: CertificateSigningRequest['status']) {
  return {
    apiVersion: 'certificates.platform/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name: 'c' },
    spec: { request: plain, signerName: 'example.com/x', usages: ['digital signature', 'client auth'], ...spec },
    ...(status ? { status } : {}),
  } as CertificateSigningRequest;
}

describe('CertificateSigningRequest validation on create (v1)', () => {
  const strategy = csrStrategy(CertificateSigningRequestKind);
  it.each<[string, () => CertificateSigningRequest, string[]]>([
    ['a valid request', () => csr({}), []],
    [
      'a request that is not PEM',
      () => csr({ request: b64('hello') }),
      ['FieldValueInvalid spec.request: PEM block type must be CERTIFICATE REQUEST'],
    ],
    [
      'a certificate instead of a request',
      () => csr({ request: b64('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n') }),
      ['FieldValueInvalid spec.request: PEM block type must be CERTIFICATE REQUEST'],
    ],
    [
      'a request whose signature does not verify',
      () => {
        const pem = Buffer.from(plain, 'base64').toString();
        const body = pem.split('\n').slice(1, -2).join('');
        const der = Buffer.from(body, 'base64');
        der[der.length - 5] = der[der.length - 5]! ^ 0xff;
        return csr({
          request: b64(
            `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`,
          ),
        });
      },
      ['FieldValueInvalid spec.request: x509: ECDSA verification failure'],
    ],
    ['no usages', () => csr({ usages: [] }), ['FieldValueRequired spec.usages: usages must be provided']],
    ['a usage twice', () => csr({ usages: ['client auth', 'client auth'] }), ['FieldValueDuplicate spec.usages[1]: ']],
    ['no signer', () => csr({ signerName: '' }), ['FieldValueRequired spec.signerName: signerName must be provided']],
    [
      'the legacy signer through v1',
      () => csr({ signerName: SIGNER_NAMES.legacyUnknown }),
      ['FieldValueInvalid spec.signerName: the legacy signerName is not allowed via this API version'],
    ],
    [
      'a signer without a path',
      () => csr({ signerName: 'example.com' }),
      [
        "FieldValueInvalid spec.signerName: must be a fully qualified domain and path of the form 'example.com/signer-name'",
      ],
    ],
    [
      'a signer domain with one label',
      () => csr({ signerName: 'example/x' }),
      ['FieldValueInvalid spec.signerName: should be a domain with at least two segments separated by dots'],
    ],
  ])('%s', (_name, make, expected) => {
    const obj = make();
    strategy.prepareForCreate(ctx, obj);
    expect(show(strategy.validate(ctx, obj))).toEqual(expected);
  });

  it('records the requester from the user, whatever the body said, and drops the status', () => {
    const obj = csr(
      { username: 'mallory', groups: ['system:masters'] },
      { conditions: [{ type: 'Approved', status: 'True' }] },
    );
    strategy.prepareForCreate(ctx, obj);
    expect(obj.spec).toMatchObject({
      username: 'alice',
      uid: 'u-1',
      groups: ['devs', 'system:authenticated'],
      extra: { scope: ['a'] },
    });
    expect(obj.status).toBeUndefined();
  });
});

describe('v1beta1', () => {
  const strategy = csrStrategy(CertificateSigningRequestV1beta1Kind);
  it.each<[string, () => string, string[], string]>([
    [
      'a node client request',
      () => nodeClient,
      ['digital signature', 'key encipherment', 'client auth'],
      SIGNER_NAMES.apiServerClientNodeAgent,
    ],
    [
      'a node serving request',
      () => nodeServing,
      ['digital signature', 'key encipherment', 'server auth'],
      SIGNER_NAMES.nodeAgentServing,
    ],
    ['anything else', () => plain, ['digital signature', 'key encipherment'], SIGNER_NAMES.legacyUnknown],
  ])('defaults the signer of %s', (_name, request, usages, signer) => {
    const obj = csr({ request: request(), usages, signerName: undefined as unknown as string });
    expect(defaultSignerName(obj)).toBe(signer);
    strategy.prepareForCreate(ctx, obj);
    expect(obj.spec.signerName).toBe(signer);
    // v1beta1 accepts the legacy signer and duplicate usages.
    expect(show(strategy.validate(ctx, obj))).toEqual([]);
  });
});

describe('updates', () => {
  const main = csrStrategy(CertificateSigningRequestKind);
  const status = csrStatusStrategy(CertificateSigningRequestKind);
  const approval = csrApprovalStrategy(CertificateSigningRequestKind);
  const stored = (): CertificateSigningRequest => {
    const o = csr({});
    main.prepareForCreate(ctx, o);
    return o;
  };
  const approved = { conditions: [{ type: 'Approved', status: 'True', reason: 'R' }] };

  it('keeps the spec as stored on the main resource, and refuses approval through it', () => {
    const old = stored();
    const obj = csr({ signerName: 'example.com/other' }, approved);
    main.prepareForUpdate(ctx, obj, old);
    expect(obj.spec.signerName).toBe('example.com/x');
    expect(obj.status).toBeUndefined();
  });

  it('approves through /approval, filling in the condition times', () => {
    const old = stored();
    const obj = structuredClone(old);
    obj.status = structuredClone(approved);
    approval.prepareForUpdate(ctx, obj, old);
    expect(show(approval.validateUpdate(ctx, obj, old))).toEqual([]);
    expect(obj.status?.conditions?.[0]).toMatchObject({
      lastUpdateTime: '2021-04-08T12:00:00Z',
      lastTransitionTime: '2021-04-08T12:00:00Z',
    });
  });

  it.each<[string, CertificateSigningRequest['status'], string[]]>([
    [
      'both Approved and Denied',
      {
        conditions: [
          { type: 'Approved', status: 'True' },
          { type: 'Denied', status: 'True' },
        ],
      },
      ['FieldValueInvalid status.conditions[1].type: Approved and Denied conditions are mutually exclusive'],
    ],
    [
      'an Approved condition that is not True',
      { conditions: [{ type: 'Approved', status: 'False' }] },
      ['FieldValueNotSupported status.conditions[0].status: supported values: "True"'],
    ],
    [
      'a certificate through /approval',
      { conditions: [{ type: 'Approved', status: 'True' }], certificate: b64('x') },
      [],
    ],
  ])('/approval: %s', (_name, st, expected) => {
    const old = stored();
    const obj = structuredClone(old);
    obj.status = st;
    approval.prepareForUpdate(ctx, obj, old);
    expect(show(approval.validateUpdate(ctx, obj, old))).toEqual(expected);
    expect(obj.status?.certificate).toBeUndefined();
  });

  it('/status may set a certificate once, keeps the approval as stored, and refuses garbage', () => {
    const old = stored();
    old.status = {
      conditions: [
        {
          type: 'Approved',
          status: 'True',
          lastUpdateTime: '2021-04-08T11:00:00Z',
          lastTransitionTime: '2021-04-08T11:00:00Z',
        },
      ],
    };
    const garbage = structuredClone(old);
    garbage.status = { ...old.status, certificate: b64('not a certificate') };
    status.prepareForUpdate(ctx, garbage, old);
    expect(garbage.status?.conditions?.[0]?.type).toBe('Approved');
    expect(show(status.validateUpdate(ctx, garbage, old))).toEqual([
      'FieldValueInvalid status.certificate: must contain at least one CERTIFICATE PEM block',
    ]);
    const denying = structuredClone(old);
    denying.status = { conditions: [...old.status!.conditions!, { type: 'Denied', status: 'True' }] };
    status.prepareForUpdate(ctx, denying, old);
    expect(show(status.validateUpdate(ctx, denying, old))).toEqual([
      'FieldValueInvalid status.conditions[1].type: Approved and Denied conditions are mutually exclusive',
      'FieldValueForbidden status.conditions: updates may not add a condition of type "Denied"',
    ]);
    const dropping = structuredClone(old);
    dropping.status = {};
    status.prepareForUpdate(ctx, dropping, old);
    expect(show(status.validateUpdate(ctx, dropping, old))).toEqual([
      'FieldValueForbidden status.conditions: updates may not remove a condition of type "Approved"',
    ]);
  });
});

describe('validateSignerName', () => {
  it.each<[string, string[]]>([
    ['example.com/a.b-c', []],
    ['Example.com/x', ['FieldValueInvalid signerName']],
    ['example.com/x/y', ['FieldValueInvalid signerName']],
    [`example.com/${'a'.repeat(254)}`, ['FieldValueInvalid signerName']],
  ])('%s', (name, expected) => {
    expect(validateSignerName(new FieldPath('signerName'), name).map((e) => `${e.type} ${e.field}`)).toEqual(expected);
  });
});
