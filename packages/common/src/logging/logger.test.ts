import { Writable } from 'node:stream';

import { type LoggingConfig, defaultLoggingConfig } from './config';
import { createLogging } from './create-logging';
import { formatTextValue } from './format';

process.env.TZ = 'UTC';

// 2026-11-22T10:00:00.123456Z
const T0 = Date.UTC(2026, 10, 22, 10, 0, 0) + 123.456;

class Capture extends Writable {
  readonly chunks: string[] = [];
  override _write(chunk: Buffer, _e: BufferEncoding, cb: () => void): void {
    this.chunks.push(chunk.toString());
    cb();
  }
  get text(): string {
    return this.chunks.join('');
  }
}

function setup(over: Partial<LoggingConfig> = {}, callSite = true) {
  const stderr = new Capture();
  const logging = createLogging({
    config: { ...defaultLoggingConfig(), ...over },
    stderr,
    now: () => T0,
    pid: 1234,
    ...(callSite ? { callSite: () => ({ file: '/src/pkg/server/file.ts', line: 42 }) } : {}),
  });
  return { stderr, logging, log: logging.logger };
}

describe('klog text format', () => {
  it('writes exact structured lines with header, quoted message and key="value" pairs', async () => {
    const { stderr, logging, log } = setup();
    log.info('Finished syncing', { key: 'default/web', durationMs: 12.5, ok: true });
    log.warn('Slow "watch"', { resource: 'pods' });
    log.error('Sync failed', { err: new Error('connection refused\nretrying'), attempt: 3 });
    log.info('no fields');
    await logging.close();
    expect(stderr.text).toBe(
      [
        'I1122 10:00:00.123456    1234 file.ts:42] "Finished syncing" key="default/web" durationMs=12.5 ok=true',
        'W1122 10:00:00.123456    1234 file.ts:42] "Slow \\"watch\\"" resource="pods"',
        'E1122 10:00:00.123456    1234 file.ts:42] "Sync failed" err="connection refused\\nretrying" attempt=3',
        'I1122 10:00:00.123456    1234 file.ts:42] "no fields"',
        '',
      ].join('\n'),
    );
  });

  it('renders values as klog does', () => {
    expect(formatTextValue('a')).toBe('"a"');
    expect(formatTextValue(3)).toBe('3');
    expect(formatTextValue(false)).toBe('false');
    expect(formatTextValue(null)).toBe('<nil>');
    expect(formatTextValue(undefined)).toBe('<nil>');
    expect(formatTextValue({ a: 1 })).toBe('{"a":1}');
    expect(formatTextValue(new Date(T0))).toBe('"2026-11-22T10:00:00.123Z"');
    expect(formatTextValue('tab\there \u0001')).toBe('"tab\\there \\x01"');
  });

  it('adds child logger names and fields, nested with a slash', async () => {
    const { stderr, logging, log } = setup();
    log.child('scheduler', { node: 'n1' }).child('queue').info('Popped', { pod: 'p' });
    await logging.close();
    expect(stderr.text).toBe(
      'I1122 10:00:00.123456    1234 file.ts:42] "Popped" logger="scheduler/queue" node="n1" pod="p"\n',
    );
  });

  it('honours --skip-headers and --add-dir-header', async () => {
    const a = setup({ skipHeaders: true });
    a.log.info('hello', { n: 1 });
    await a.logging.close();
    expect(a.stderr.text).toBe('"hello" n=1\n');
    const b = setup({ addDirHeader: true });
    b.log.info('hello');
    await b.logging.close();
    expect(b.stderr.text).toBe('I1122 10:00:00.123456    1234 server/file.ts:42] "hello"\n');
  });

  it('captures the real call site when no override is given', async () => {
    const { stderr, logging, log } = setup({}, false);
    log.info('where');
    log.v(0).info('verbose where');
    log.child('c').warn('child where');
    await logging.close();
    const lines = stderr.text.trim().split('\n');
    expect(lines).toHaveLength(3);
    for (const l of lines) expect(l).toMatch(/^[IW]1122 10:00:00\.123456 {4}1234 logger\.test\.ts:\d+\] /);
  });

  it('filters by -v and --vmodule', async () => {
    const a = setup({ verbosity: 2 });
    a.log.v(2).info('two');
    a.log.v(3).info('three');
    a.log.debug('debug is v4');
    expect(a.log.v(2).enabled).toBe(true);
    expect(a.log.v(3).enabled).toBe(false);
    await a.logging.close();
    expect(a.stderr.text).toBe('I1122 10:00:00.123456    1234 file.ts:42] "two"\n');

    // The call site comes from the real stack: this file is logger.test.ts.
    const b = setup({ verbosity: 0, vmodule: [{ pattern: 'logger.te*', level: 5 }] }, false);
    b.log.v(5).info('five');
    b.log.v(6).info('six');
    const c = setup({ verbosity: 0, vmodule: [{ pattern: 'other', level: 5 }] }, false);
    c.log.v(5).info('five');
    await b.logging.close();
    await c.logging.close();
    expect(b.stderr.text).toMatch(/^I1122 10:00:00\.123456 {4}1234 logger\.test\.ts:\d+\] "five"\n$/);
    expect(c.stderr.text).toBe('');
  });

  it('appends a stack trace at --log-backtrace-at', async () => {
    const { stderr, logging, log } = setup({ backtraceAt: { file: 'file.ts', line: 42 } });
    log.info('traced');
    await logging.close();
    expect(stderr.text.split('\n')[0]).toBe('I1122 10:00:00.123456    1234 file.ts:42] "traced"');
    expect(stderr.text.split('\n')[1]).toMatch(/^\s+at /);
  });

  it('redacts sensitive fields with --experimental-logging-sanitization', async () => {
    const { stderr, logging, log } = setup({ sanitization: true, skipHeaders: true });
    log.info('login', { user: 'bob', password: 'hunter2', bearerToken: 'abc' });
    await logging.close();
    expect(stderr.text).toBe('"login" user="bob" password="[REDACTED]" bearerToken="[REDACTED]"\n');
  });
});

describe('JSON format', () => {
  it('adds caller only when a call site is known (--log-backtrace-at forces the capture)', async () => {
    const { stderr, logging, log } = setup({ format: 'json', backtraceAt: { file: 'elsewhere.ts', line: 1 } });
    log.info('with caller');
    await logging.close();
    expect(stderr.text).toBe('{"ts":1795341600123.456,"caller":"server/file.ts:42","msg":"with caller","v":0}\n');
  });

  it('writes one JSON object per line like Kubernetes', async () => {
    const { stderr, logging, log } = setup({ format: 'json' });
    log.child('ctrl').info('Finished syncing', { key: 'a/b', durationMs: 3 });
    log.v(0).info('verbose zero');
    log.error('Sync failed', { err: new Error('boom') });
    await logging.close();
    expect(stderr.text).toBe(
      [
        '{"ts":1795341600123.456,"msg":"Finished syncing","v":0,"logger":"ctrl","key":"a/b","durationMs":3}',
        '{"ts":1795341600123.456,"msg":"verbose zero","v":0}',
        '{"ts":1795341600123.456,"msg":"Sync failed","err":"boom"}',
        '',
      ].join('\n'),
    );
  });
});
