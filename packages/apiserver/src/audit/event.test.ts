import { eventJson } from './event';
import { AUDIT_V1, type AuditEvent, SHARED_JSON, type SharedJson } from './types';

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

  it('writes the common fields once for the stages of a request, and again when one of them was replaced', () => {
    const box: SharedJson = { apiVersion: '', head: '', body: '' };
    const first: AuditEvent = { ...full, stage: 'RequestReceived', [SHARED_JSON]: box };
    expect(eventJson(first, AUDIT_V1)).toBe(JSON.stringify(first));
    const body = box.body;
    expect(body).toContain('"objectRef":{"resource":"configmaps"');
    const second: AuditEvent = { ...first, stage: 'ResponseComplete', [SHARED_JSON]: box };
    expect(eventJson(second, AUDIT_V1)).toBe(JSON.stringify(second));
    expect(box.body).toBe(body); // the same text, not written again
    expect(box.of).toBe(first);
    // A create learns its name after RequestReceived: the reference is a new object, and the text follows it.
    const named: AuditEvent = { ...second, objectRef: { ...full.objectRef, name: 'other' }, [SHARED_JSON]: box };
    expect(eventJson(named, AUDIT_V1)).toBe(JSON.stringify(named));
    expect(box.of).toBe(named);
    const v1beta1 = JSON.parse(eventJson(named, 'audit.platform/v1beta1')) as AuditEvent;
    expect(v1beta1).toEqual({ ...JSON.parse(JSON.stringify(named)), apiVersion: 'audit.platform/v1beta1' });
    expect(Object.getOwnPropertySymbols(JSON.parse(JSON.stringify(named)))).toEqual([]);
  });
});
