import { buildCommand, parseOrExit } from './command';
import {
  type FlagDef,
  OptionGroupBase,
  cidrFlag,
  deprecated,
  floatFlag,
  mapFlag,
  portRangeFlag,
  stringArrayFlag,
} from './flags';
import { LoggingOptions } from './logging-options';
import { type PortRange } from './parsers';
import { SecureServingOptions } from './secure-serving-options';
import { VersionOptions } from './version-options';

class Builders extends OptionGroupBase<unknown> {
  cidr = '10.0.0.0/24';
  range: PortRange = { base: 30000, size: 2768 };
  ratio = 0.1;
  map = new Map<string, string>();
  headers: string[] = [];
  constructor() {
    super('Builders');
  }
  protected flagDefs(): FlagDef[] {
    return [
      cidrFlag('cidr', 'a range', this.cidr, (v) => (this.cidr = v)),
      portRangeFlag('ports', 'port range', this.range, (v) => (this.range = v)),
      floatFlag('ratio', 'a ratio', this.ratio, (v) => (this.ratio = v), { range: { min: 0, max: 1 } }),
      mapFlag('labels', 'labels', this.map, (v) => (this.map = v)),
      stringArrayFlag('header', 'name:value, repeatable', this.headers, (v) => (this.headers = v)),
      deprecated(
        cidrFlag('old-cidr', 'old', '', () => {}),
        'use --cidr instead.',
      ),
    ];
  }
  applyTo(): void {}
}

function run(argv: string[], groups = [new Builders()], version?: VersionOptions) {
  let out = '';
  let err = '';
  const cmd = buildCommand('platform-test', 'A test daemon.', groups);
  const outcome = parseOrExit(cmd, groups, argv, version, { stdout: (t) => (out += t), stderr: (t) => (err += t) });
  return { outcome, out, err, groups };
}

describe('parseOrExit', () => {
  it('runs with valid flags, parsing every builder type and accumulating repeats', () => {
    const { outcome, groups, err } = run([
      '--cidr=fd00::/64',
      '--ports=8000-8100',
      '--ratio=0.5',
      '--labels=a=1,b=2',
      '--labels=b=3',
      '--header=A: x,y',
      '--header=B: z',
    ]);
    expect(outcome).toEqual({ errors: [] });
    expect(err).toBe('');
    const b = groups[0]!;
    expect(b.cidr).toBe('fd00::/64');
    expect(b.range).toEqual({ base: 8000, size: 101 });
    expect(b.ratio).toBe(0.5);
    expect([...b.map]).toEqual([
      ['a', '1'],
      ['b', '3'],
    ]);
    expect(b.headers).toEqual(['A: x,y', 'B: z']);
  });

  it('prints every error with a usage hint and exits 1', () => {
    const { outcome, err } = run(['--cidr=10.0.0.0/40', '--ports=9-1', '--ratio=2', '--labels=novalue', '--bogus']);
    expect(outcome.exitCode).toBe(1);
    expect(outcome.errors).toHaveLength(5);
    expect(err).toBe(
      [
        'Error: unknown flag: --bogus',
        'Error: invalid argument "10.0.0.0/40" for "--cidr" flag: invalid CIDR address: 10.0.0.0/40',
        'Error: invalid argument "9-1" for "--ports" flag: unable to parse port range: 9-1: end port is lower than start port',
        'Error: invalid argument "2" for "--ratio" flag: must be between 0 and 1, inclusive',
        'Error: invalid argument "novalue" for "--labels" flag: malformed pair, expect string=string',
        "Run 'platform-test --help' for usage.",
        '',
      ].join('\n'),
    );
  });

  it('prints warnings and runs', () => {
    const { outcome, err } = run(['--old-cidr=10.0.0.0/8']);
    expect(outcome).toEqual({ errors: [] });
    expect(err).toBe('W Flag --old-cidr has been deprecated, use --cidr instead.\n');
  });

  it('exits 0 after -h/--help', () => {
    for (const flag of ['-h', '--help']) {
      const { outcome, out } = run([flag]);
      expect(outcome.exitCode).toBe(0);
      expect(out).toMatch(/^A test daemon\.\n\nUsage:\n {2}platform-test \[flags\]\n\nBuilders flags:\n/);
      expect(out).toContain('      --ports portRange          port range (default 30000-32767)\n');
      expect(out).toContain('(DEPRECATED: use --cidr instead.)');
    }
  });

  it('prints the version before semantic validation, but not over command-line errors', () => {
    const version = new VersionOptions('test');
    const serving = new SecureServingOptions({ port: 1, certDir: '', pairName: 'x', allowDisable: false });
    const a = run(['--version', '--secure-port=0'], [version, serving] as never, version);
    expect(a.outcome.exitCode).toBe(0);
    expect(a.out).toBe('platform-test v0.1.0\n');
    const v2 = new VersionOptions('test');
    const b = run(['--version', '--nope'], [v2] as never, v2);
    expect(b.outcome.exitCode).toBe(1);
    expect(b.out).toBe('');
  });

  it('warns that --log-file does nothing while --logtostderr is on', () => {
    const { err, outcome } = run(['--log-file=/tmp/x.log'], [new LoggingOptions()] as never);
    expect(outcome).toEqual({ errors: [] });
    expect(err).toBe(
      'W --log-file have no effect while --logtostderr is true (the default): add --logtostderr=false\n',
    );
    expect(run(['--log-file=/tmp/x.log', '--logtostderr=false'], [new LoggingOptions()] as never).err).toBe('');
  });
});
