import { parseForTest } from './testing/parse';
import { VersionOptions } from './version-options';

const parse = parseForTest;

describe('version options', () => {
  it('handles --version, --version=true, --version=raw, --version=false', () => {
    const cases: [string[], RegExp | undefined][] = [
      [['--version'], /^platform-scheduler v0\.1\.0\n$/],
      [['--version=true'], /^platform-scheduler v0\.1\.0\n$/],
      [['--version=raw'], /^version\.Info\{Major:"1", Minor:"21", GitVersion:"v1\.21\.0\+platform\.0\.1\.0", /],
      [['--version=false'], undefined],
      [[], undefined],
    ];
    for (const [argv, expected] of cases) {
      const v = new VersionOptions('scheduler');
      expect(parse([v], argv).errors).toEqual([]);
      let out = '';
      expect(v.printIfRequested((t) => (out += t))).toBe(expected !== undefined);
      if (expected) expect(out).toMatch(expected);
    }
    expect(parse([new VersionOptions('x')], ['--version=maybe']).messages).toEqual([
      'invalid argument "maybe" for "--version" flag: want true, false or raw, got "maybe"',
    ]);
  });
});
