import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { parseCommandLine } from '@platform/common';
import { Command } from 'commander';

import { type RestConfig } from '../config/client-config';
import { ClientConnectionOptions } from './client-connection-options';

function parse(argv: string[], defaults = {}): { o: ClientConnectionOptions; errors: string[] } {
  const o = new ClientConnectionOptions(defaults);
  const cmd = new Command('test');
  o.addFlags(cmd);
  const outcome = parseCommandLine(cmd, [o], argv, () => {});
  return { o, errors: [...outcome.errors, ...o.validate()].map((e) => e.message) };
}

describe('ClientConnectionOptions', () => {
  it('has the defaults of Document 2 and takes a daemon-specific burst', () => {
    expect(parse(['--master=https://h:6443']).o.config).toEqual({
      clientConfig: '',
      master: 'https://h:6443',
      contentType: 'application/vnd.platform.protobuf',
      qps: 20,
      burst: 30,
    });
    expect(parse(['--master=h'], { burst: 100 }).o.config.burst).toBe(100);
  });

  it('rejects bad values, naming the flag', () => {
    const { errors } = parse(['--api-content-type=text/yaml', '--api-qps=-1']);
    expect(errors.join('\n')).toMatch(/--api-content-type: unsupported content type "text\/yaml"/);
    expect(errors.join('\n')).toMatch(/--api-qps must not be negative/);
    expect(errors.join('\n')).toMatch(/one of --clientconfig or --master is required/);
  });

  it('loads the file, with --master overriding its server, and names a bad field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cc-opts-'));
    const path = join(dir, 'c.conf');
    writeFileSync(
      path,
      'clusters: [{name: c, cluster: {server: "https://a:1"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n',
    );
    const { o } = parse([`--clientconfig=${path}`, '--master=https://b:2', '--api-qps=50', '--api-burst=60']);
    const cfg: { client?: RestConfig } = {};
    o.applyTo(cfg);
    expect(cfg.client).toMatchObject({ server: 'https://b:2', token: 't', qps: 50, burst: 60 });
    writeFileSync(
      path,
      'clusters: [{name: c, cluster: {server: 7}}]\ncontexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n',
    );
    expect(() => parse([`--clientconfig=${path}`]).o.applyTo({})).toThrow(
      /c\.conf: clusters\[0\]\.cluster\.server: must be a string/,
    );
  });
});
