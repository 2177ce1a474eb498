import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  decodeLeaderMigrationConfiguration,
  defaultLeaderMigrationConfiguration,
  readLeaderMigrationConfiguration,
  validateLeaderMigrationOptions,
} from './leader-migration';
import { main } from './main';

const dir = mkdtempSync(join(tmpdir(), 'leader-migration-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

const GOOD = `kind: LeaderMigrationConfiguration
apiVersion: controllermanager.config.platform/v1alpha1
leaderName: cloud-provider-extraction-migration
resourceLock: endpoints
controllerLeaders:
  - name: route
    component: platform-controller-manager
  - name: service
    component: cloud-controller-manager
`;

describe('the LeaderMigrationConfiguration file', () => {
  it('reads YAML with its controller leaders, and JSON', () => {
    expect(readLeaderMigrationConfiguration(file('good.yaml', GOOD))).toEqual({
      config: {
        leaderName: 'cloud-provider-extraction-migration',
        resourceLock: 'endpoints',
        controllerLeaders: [
          { name: 'route', component: 'platform-controller-manager' },
          { name: 'service', component: 'cloud-controller-manager' },
        ],
      },
      errors: [],
    });
    const json = file(
      'good.json',
      JSON.stringify({
        apiVersion: 'controllermanager.config.platform/v1alpha1',
        kind: 'LeaderMigrationConfiguration',
        leaderName: 'm',
      }),
    );
    // resourceLock defaults to leases (1.21's v1alpha1 defaulting).
    expect(readLeaderMigrationConfiguration(json).config).toEqual({
      leaderName: 'm',
      resourceLock: 'leases',
      controllerLeaders: [],
    });
  });

  it('reports every problem, naming the option, the file and the field', () => {
    const p = file(
      'bad.yaml',
      `apiVersion: controllermanager.config.k8s.io/v1alpha1
kind: LeaderMigrationConfiguration
resourceLock: configmaps
controllerLeaders:
  - name: route
  - component: platform-controller-manager
`,
    );
    expect(readLeaderMigrationConfiguration(p).errors.map((e) => e.message)).toEqual([
      `--leader-migration-config: ${p}: apiVersion must be controllermanager.config.platform/v1alpha1, got "controllermanager.config.k8s.io/v1alpha1"`,
      `--leader-migration-config: ${p}: leaderName: Required value: leaderName must be set for LeaderMigrationConfiguration`,
      `--leader-migration-config: ${p}: resourceLock: Invalid value: "configmaps": resource Lock must be one of 'leases' or 'endpoints'`,
      `--leader-migration-config: ${p}: controllerLeaders[0].component: Required value: component must be set`,
      `--leader-migration-config: ${p}: controllerLeaders[1].name: Required value: name must be set`,
    ]);
    expect(readLeaderMigrationConfiguration(join(dir, 'missing.yaml')).errors[0]?.message).toMatch(
      /^--leader-migration-config: file ".*missing\.yaml" does not exist$/,
    );
    expect(readLeaderMigrationConfiguration(file('broken.yaml', 'a: [1\n')).errors[0]?.message).toMatch(
      /^--leader-migration-config: cannot read .*broken\.yaml: /,
    );
    expect(decodeLeaderMigrationConfiguration('text', 'f').errors[0]?.message).toBe(
      '--leader-migration-config: f: want a LeaderMigrationConfiguration object',
    );
    expect(
      decodeLeaderMigrationConfiguration(
        { ...readLeaderMigrationConfiguration(file('g2.yaml', GOOD)).config, controllerLeaders: 'route' },
        'f',
      ).errors.map((e) => e.message),
    ).toContain('--leader-migration-config: f: controllerLeaders: want a list, got "route"');
  });

  it('has 1.21 defaults when leader migration is on without a file', () => {
    expect(defaultLeaderMigrationConfiguration()).toEqual({
      leaderName: 'cloud-provider-extraction-migration',
      resourceLock: 'leases',
      controllerLeaders: [
        { name: 'route', component: 'platform-controller-manager' },
        { name: 'service', component: 'platform-controller-manager' },
        { name: 'cloud-node-lifecycle', component: 'platform-controller-manager' },
      ],
    });
  });
});

describe('--enable-leader-migration and --leader-migration-config', () => {
  const good = (): string => file('ok.yaml', GOOD);

  it('need the ControllerManagerLeaderMigration feature gate, as in 1.21', () => {
    expect(
      validateLeaderMigrationOptions({ enableLeaderMigration: true, leaderMigrationConfig: '', featureEnabled: false }),
    ).toEqual([
      new Error(
        '--enable-leader-migration: Leader Migration requires feature gate ControllerManagerLeaderMigration (--feature-gates=ControllerManagerLeaderMigration=true)',
      ),
    ]);
    expect(
      validateLeaderMigrationOptions({
        enableLeaderMigration: true,
        leaderMigrationConfig: good(),
        featureEnabled: true,
      }),
    ).toEqual([]);
    expect(
      validateLeaderMigrationOptions({
        enableLeaderMigration: false,
        leaderMigrationConfig: '',
        featureEnabled: false,
      }),
    ).toEqual([]);
  });

  it('refuse a file without --enable-leader-migration', () => {
    expect(
      validateLeaderMigrationOptions({
        enableLeaderMigration: false,
        leaderMigrationConfig: good(),
        featureEnabled: true,
      }),
    ).toEqual([new Error('--leader-migration-config is given but --enable-leader-migration is false')]);
  });

  it('make the daemon exit 1 at startup with the message, before anything runs', async () => {
    const written: string[] = [];
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      const code = await main([
        '--master=https://127.0.0.1:1',
        '--secure-port=0',
        '--enable-leader-migration',
        `--leader-migration-config=${good()}`,
      ]);
      expect(code).toBe(1);
    } finally {
      spy.mockRestore();
    }
    expect(written.join('')).toContain('Leader Migration requires feature gate ControllerManagerLeaderMigration');
  });
});
