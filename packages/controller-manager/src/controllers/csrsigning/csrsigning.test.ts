import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type CertificateSigningRequest, SIGNER_NAMES } from '@platform/api';
import { testCA } from '@platform/apiserver';
import { createCertificateRequest, parseCertificateRequest, parseOrExit } from '@platform/common';
import { Command } from 'commander';

import { cleanupReason, CSR_CLEANER_DEFAULTS } from '../csrcleaner';
import { CSRSigningOptions } from './options';
import { signerProblem, signingAuthorities } from './index';

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'csrsigning-'));
  const ca = await testCA('ca');
  writeFileSync(join(dir, 'ca.crt'), ca.certPem);
  writeFileSync(join(dir, 'ca.key'), ca.keyPem);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function parse(args: string[]): { errors: string[]; o: CSRSigningOptions } {
  const o = new CSRSigningOptions();
  const cmd = new Command('test');
  o.addFlags(cmd);
  const errors = parseOrExit(cmd, [o as never], args, undefined, { stdout: () => {}, stderr: () => {} }).errors.map(
    (e) => e.message,
  );
  return { errors, o };
}

describe('--cluster-signing-* options', () => {
  it('the general pair signs for every built-in signer', () => {
    const { errors, o } = parse([
      `--cluster-signing-cert-file=${dir}/ca.crt`,
      `--cluster-signing-key-file=${dir}/ca.key`,
    ]);
    expect(errors).toEqual([]);
    expect([...signingAuthorities(o.values()).keys()].sort()).toEqual(Object.values(SIGNER_NAMES).sort());
    expect(o.values().durationMs).toBe(365 * 24 * 3600 * 1000);
  });

  it('a specific pair signs for its signer only', () => {
    const { errors, o } = parse([
      `--cluster-signing-agent-client-cert-file=${dir}/ca.crt`,
      `--cluster-signing-agent-client-key-file=${dir}/ca.key`,
      '--cluster-signing-duration=2h',
    ]);
    expect(errors).toEqual([]);
    expect([...signingAuthorities(o.values()).keys()]).toEqual([SIGNER_NAMES.apiServerClientNodeAgent]);
    expect(o.values().durationMs).toBe(2 * 3600 * 1000);
  });

  it.each<[string, string[], string]>([
    [
      'general and specific together',
      ['--cluster-signing-cert-file=/x', '--cluster-signing-legacy-unknown-cert-file=/y'],
      'cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time',
    ],
    [
      'a cert without its key',
      ['--cluster-signing-agent-serving-cert-file=/y'],
      'cannot specify key without cert or cert without key',
    ],
    [
      'an unreadable pair',
      ['--cluster-signing-cert-file=/nope.crt', '--cluster-signing-key-file=/nope.key'],
      'unable to read "/nope.crt": ENOENT',
    ],
  ])('refuses %s', (_name, args, message) => {
    expect(parse(args).errors.join('\n')).toContain(message);
  });
});

describe('signer rules', () => {
  it('each built-in signer refuses what 1.21 refuses', async () => {
    const node = parseCertificateRequest(
      (await createCertificateRequest({ commonName: 'system:node:a', organizations: ['system:nodes'] })).csrPem,
    );
    const client = ['digital signature', 'key encipherment', 'client auth'];
    expect(signerProblem(SIGNER_NAMES.apiServerClientNodeAgent, node, client)).toBeUndefined();
    expect(signerProblem(SIGNER_NAMES.nodeAgentServing, node, ['digital signature', 'server auth'])).toBe(
      'DNS or IP subjectAltName is required',
    );
    expect(signerProblem(SIGNER_NAMES.apiServerClient, node, [...client, 'server auth'])).toBe(
      'invalid usage for client certificate: server auth',
    );
    expect(signerProblem(SIGNER_NAMES.legacyUnknown, node, ['anything'])).toBeUndefined();
  });
});

describe('cleaner retention', () => {
  const now = Date.parse('2021-04-08T12:00:00Z');
  const at = (hoursAgo: number): string => new Date(now - hoursAgo * 3600_000).toISOString();
  const csr = (created: number, conditions: object[], certificate?: string): CertificateSigningRequest =>
    ({
      metadata: { name: 'c', creationTimestamp: at(created) },
      spec: { request: '', signerName: 'x.y/z' },
      status: { conditions, ...(certificate ? { certificate } : {}) },
    }) as CertificateSigningRequest;
  it.each<[string, CertificateSigningRequest, string | undefined]>([
    ['pending for a day and more', csr(25, []), 'pending past its deadline'],
    ['pending for an hour', csr(1, []), undefined],
    [
      'denied two hours ago',
      csr(3, [{ type: 'Denied', status: 'True', lastUpdateTime: at(2) }]),
      'denied past its deadline',
    ],
    ['denied just now', csr(3, [{ type: 'Denied', status: 'True', lastUpdateTime: at(0.5) }]), undefined],
    [
      'failed two hours ago',
      csr(3, [{ type: 'Failed', status: 'True', lastUpdateTime: at(2) }]),
      'failed past its deadline',
    ],
    [
      'approved, not issued, two hours ago',
      csr(3, [{ type: 'Approved', status: 'True', lastUpdateTime: at(2) }]),
      undefined,
    ],
    [
      'issued two hours ago',
      csr(3, [{ type: 'Approved', status: 'True', lastUpdateTime: at(2) }], 'Y2VydA=='),
      'issued past its deadline',
    ],
  ])('%s', (_name, obj, reason) => {
    expect(cleanupReason(obj, now, CSR_CLEANER_DEFAULTS)).toBe(reason);
  });
});
