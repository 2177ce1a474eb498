import { eventJson } from './event';
import { AUDIT_V1, type AuditEvent } from './types';

const full: AuditEvent = {
  kind: 'Event',
  apiVersion: AUDIT_V1,
  level: 'RequestResponse',
  auditID: 'a"b\\c',
  stage: 'ResponseComplete',
  requestURI: '/api/v1/namespaces/ns/configmaps?labelSelector=a%3Db&x="y"',
  verb: 'create',
  user: { username: 'ünïcode\u2028user', uid: '1', groups: ['g1', 'system:authenticated'], extra: { k: ['v\n'] } },
  impersonatedUser: { username: 'other', groups: ['x'] },
  sourceIPs: ['127.0.0.1', '::1'],
  userAgent: 'kubectl/v1.20.0 (linux/amd64) kubernetes/abc\t',
  objectRef: { resource: 'configmaps', namespace: 'ns', name: 'cm', apiGroup: '', apiVersion: 'v1' },
  responseStatus: { metadata: {}, code: 201 },
  requestObject: { kind: 'ConfigMap', data: { a: '\u0000\ud800' } },
  responseObject: { kind: 'ConfigMap', metadata: { name: 'cm' } },
  requestReceivedTimestamp: '2026-11-24T23:00:00.000001Z',
  stageTimestamp: '2026-11-24T23:00:00.000002Z',
  annotations: { 'authorization.platform/reason': 'RBAC: allowed by "x"' },
};

describe('eventJson', () => {
  it('writes the document JSON.stringify writes, in the asked version', () => {
    expect(JSON.parse(eventJson(full, AUDIT_V1))).toEqual(JSON.parse(JSON.stringify(full)));
    expect(eventJson(full, AUDIT_V1)).toBe(JSON.stringify(full));
    expect(JSON.parse(eventJson(full, 'audit.platform/v1beta1')).apiVersion).toBe('audit.platform/v1beta1');
  });

  it('leaves out the fields an event does not have, and reuses what two stages share', () => {
    const received: AuditEvent = {
      kind: 'Event',
      apiVersion: AUDIT_V1,
      level: 'Metadata',
      auditID: 'id',
      stage: 'RequestReceived',
      requestURI: '/healthz',
      verb: 'get',
      user: {},
      requestReceivedTimestamp: '2026-11-24T23:00:00.000001Z',
      stageTimestamp: '2026-11-24T23:00:00.000001Z',
    };
    expect(eventJson(received, AUDIT_V1)).toBe(JSON.stringify(received));
    const complete: AuditEvent = {
      ...received,
      stage: 'ResponseComplete',
      responseStatus: { metadata: {}, code: 200 },
    };
    expect(JSON.parse(eventJson(complete, AUDIT_V1))).toEqual(complete);
    expect(eventJson(complete, AUDIT_V1)).toContain('"user":{}');
  });
});
