import { boolFlag, deprecationWarning, durationFlag, OptionGroupBase, stringsFlag, type FlagDef } from './flags';
import { parseForTest } from './testing/parse';
import { VersionOptions } from './version-options';

const parse = parseForTest;

describe('flag parsing (pflag semantics)', () => {
  class Sample extends OptionGroupBase<unknown> {
    on = false;
    list: string[] = ['a'];
    wait = 5000;
    constructor() {
      super('Sample');
    }
    protected flagDefs(): FlagDef[] {
      return [
        boolFlag('on', 'turn on', this.on, (v) => (this.on = v)),
        stringsFlag('list', 'a list', this.list, (v) => (this.list = v)),
        durationFlag('wait', 'how long', this.wait, (v) => (this.wait = v)),
        boolFlag('old', 'old flag', false, () => {}, { deprecated: 'use --on instead.' }),
      ];
    }
    applyTo(): void {}
  }

  it('takes bools as --x, --x=true, --x=false', () => {
    const a = new Sample();
    expect(parse([a], ['--on']).errors).toEqual([]);
    expect(a.on).toBe(true);
    const b = new Sample();
    parse([b], ['--on=true', '--on=false']);
    expect(b.on).toBe(false);
    const c = new Sample();
    expect(parse([c], ['--on=maybe']).messages).toEqual([
      'invalid argument "maybe" for "--on" flag: strconv.ParseBool: parsing "maybe": invalid syntax',
    ]);
  });

  it('accumulates repeated list flags, the first replacing the default', () => {
    const s = new Sample();
    parse([s], ['--list=x,y', '--list', 'z']);
    expect(s.list).toEqual(['x', 'y', 'z']);
    const d = new Sample();
    parse([d], []);
    expect(d.list).toEqual(['a']);
  });

  it('reports every bad value at once, naming each flag, and keeps going', () => {
    const s = new Sample();
    const r = parse([s], ['--wait=5x', '--on=2', '--list=ok']);
    expect(r.messages).toEqual([
      'invalid argument "5x" for "--wait" flag: time: unknown unit "x" in duration "5x"',
      'invalid argument "2" for "--on" flag: strconv.ParseBool: parsing "2": invalid syntax',
    ]);
    expect(s.list).toEqual(['ok']);
  });

  it('words unknown flags and missing values like pflag', () => {
    expect(parse([new Sample()], ['--nope']).messages).toEqual(['unknown flag: --nope']);
    expect(parse([new Sample()], ['--wait']).messages).toEqual(['flag needs an argument: --wait']);
    expect(parse([new Sample()], ['extra']).messages[0]).toMatch(/^unexpected arguments: /);
  });

  it('warns once when a deprecated flag is used, and accepts it', () => {
    const s = new Sample();
    const r = parse([s], ['--old', '--old=false']);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual(['Flag --old has been deprecated, use --on instead.']);
    expect(deprecationWarning('x', 'gone.')).toBe('Flag --x has been deprecated, gone.');
  });

  it('prints help grouped by family with types, defaults and deprecations', () => {
    const r = parse([new Sample(), new VersionOptions('test')], ['--help']);
    expect(r.helpShown).toBe(true);
    expect(r.help).toContain('Usage:\n  platform-test [flags]\n\nSample flags:\n\n');
    expect(r.help).toContain('      --wait duration   how long (default 5s)\n');
    expect(r.help).toContain('      --list strings    a list (default [a])\n');
    expect(r.help).toContain('      --old             old flag (DEPRECATED: use --on instead.)\n');
    expect(r.help).toContain('      --on              turn on\n');
    expect(r.help).toContain('Generic flags:');
  });
});
