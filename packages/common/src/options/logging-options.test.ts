import { type LoggingConfig } from '../logging/config';

import { LoggingOptions } from './logging-options';
import { parseForTest } from './testing/parse';

const parse = parseForTest;

describe('logging options', () => {
  function logging(argv: string[]) {
    const o = new LoggingOptions();
    const r = parse([o], argv);
    const config: { logging?: LoggingConfig } = {};
    if (r.errors.length === 0) o.applyTo(config);
    return { o, r, config: config.logging! };
  }

  it('parses every flag', () => {
    const { r, config } = logging([
      '--add-dir-header',
      '--alsologtostderr',
      '--log-backtrace-at=server.ts:42',
      '--log-dir=/tmp/logs',
      '--log-file=/tmp/x.log',
      '--log-file-max-size=10',
      '--log-flush-frequency=1s',
      '--logtostderr=false',
      '--one-output',
      '--skip-headers',
      '--skip-log-headers',
      '--stderrthreshold=WARNING',
      '-v=4',
      '--vmodule=server*=5,queue=2',
      '--experimental-logging-sanitization',
    ]);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(config).toEqual({
      format: 'text',
      verbosity: 4,
      vmodule: [
        { pattern: 'server*', level: 5 },
        { pattern: 'queue', level: 2 },
      ],
      addDirHeader: true,
      alsoLogToStderr: true,
      logToStderr: false,
      oneOutput: true,
      skipHeaders: true,
      skipLogHeaders: true,
      stderrThreshold: 1,
      backtraceAt: { file: 'server.ts', line: 42 },
      logDir: '/tmp/logs',
      logFile: '/tmp/x.log',
      logFileMaxSizeMB: 10,
      flushFrequencyMs: 1000,
      sanitization: true,
    });
    expect(logging(['-v', '3', '--stderrthreshold=0']).config).toMatchObject({ verbosity: 3, stderrThreshold: 0 });
    expect(logging(['--v=2']).config.verbosity).toBe(2);
  });

  it('rejects every kind of bad value, naming the flag', () => {
    const { r } = logging([
      '--log-flush-frequency=5x',
      '--v=high',
      '-v=-1',
      '--log-file-max-size=-1',
      '--stderrthreshold=LOUD',
      '--vmodule=server',
      '--log-backtrace-at=nofile',
      '--logging-format=yaml',
      '--logtostderr=nope',
    ]);
    expect(r.messages).toEqual([
      'invalid argument "5x" for "--log-flush-frequency" flag: time: unknown unit "x" in duration "5x"',
      'invalid argument "high" for "-v, --v" flag: strconv.ParseInt: parsing "high": invalid syntax',
      'invalid argument "-1" for "-v, --v" flag: must be between 0 and 2147483647, inclusive',
      'invalid argument "-1" for "--log-file-max-size" flag: must be between 0 and 9007199254740991, inclusive',
      'invalid argument "LOUD" for "--stderrthreshold" flag: unknown severity "LOUD": want INFO, WARNING, ERROR, FATAL or 0-3',
      'invalid argument "server" for "--vmodule" flag: syntax error: expect comma-separated list of filename=N, got "server"',
      'invalid argument "nofile" for "--log-backtrace-at" flag: syntax error: expect file.ext:N, got "nofile"',
      'invalid argument "yaml" for "--logging-format" flag: unsupported logging format "yaml": want "json" or "text"',
      'invalid argument "nope" for "--logtostderr" flag: strconv.ParseBool: parsing "nope": invalid syntax',
    ]);
  });

  it('says which set flags --logging-format=json ignores, and ignores them', () => {
    const { r, config } = logging([
      '--logging-format=json',
      '--vmodule=x=2',
      '--skip-headers',
      '--log-file=/tmp/a.log',
      '-v=3',
    ]);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([
      '--logging-format=json ignores --log-file, --skip-headers, --vmodule: these flags only apply to the text format',
    ]);
    expect(config).toMatchObject({ format: 'json', verbosity: 3, vmodule: [], skipHeaders: false, logFile: '' });
    expect(logging(['--logging-format=json']).r.warnings).toEqual([]);
  });

  it('marks --logging-format deprecated for the node agent', () => {
    const o = new LoggingOptions('use the configuration file.');
    expect(parse([o], ['--logging-format=text']).warnings).toEqual([
      'Flag --logging-format has been deprecated, use the configuration file.',
    ]);
  });
});
