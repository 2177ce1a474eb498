import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';

import { type LoggingConfig, defaultLoggingConfig } from './config';
import { createLogging } from './create-logging';

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

describe('log files', () => {
  it('routes lines by severity into --log-dir files with klog names, headers and symlinks', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logdir-'));
    const { stderr, logging, log } = setup({ logToStderr: false, logDir: dir });
    log.info('info line');
    log.warn('warn line');
    log.error('error line');
    await logging.close();
    const info = readFileSync(join(dir, readlinkSync(join(dir, 'platform.INFO'))), 'utf8');
    const warning = readFileSync(join(dir, readlinkSync(join(dir, 'platform.WARNING'))), 'utf8');
    const error = readFileSync(join(dir, readlinkSync(join(dir, 'platform.ERROR'))), 'utf8');
    expect(info).toMatch(/^Log file created at: 2026\/11\/22 10:00:00\n/);
    expect(info).toContain('Log line format: [IWEF]mmdd hh:mm:ss.uuuuuu threadid file:line] msg\n');
    expect(info).toContain('"info line"');
    expect(info).toContain('"warn line"');
    expect(info).toContain('"error line"');
    expect(warning).not.toContain('"info line"');
    expect(warning).toContain('"error line"');
    expect(error).toContain('"error line"');
    expect(error).not.toContain('"warn line"');
    // Only ERROR reaches standard error at the default threshold.
    expect(stderr.text).toBe('E1122 10:00:00.123456    1234 file.ts:42] "error line"\n');
    expect(readdirSync(dir).filter((f) => f.includes('.log.INFO.20261122-100000.1234'))).toHaveLength(1);
  });

  it('writes each line only to its own severity with --one-output and everything to stderr with --alsologtostderr', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logdir-'));
    const { stderr, logging, log } = setup({
      logToStderr: false,
      logDir: dir,
      oneOutput: true,
      alsoLogToStderr: true,
      skipLogHeaders: true,
    });
    log.info('info line');
    log.error('error line');
    await logging.close();
    const info = readFileSync(join(dir, readlinkSync(join(dir, 'platform.INFO'))), 'utf8');
    expect(info).toBe('I1122 10:00:00.123456    1234 file.ts:42] "info line"\n');
    expect(stderr.text.split('\n')).toHaveLength(3);
  });

  it('flushes files every --log-flush-frequency', async () => {
    jest.useFakeTimers();
    try {
      const dir = mkdtempSync(join(tmpdir(), 'flush-'));
      const file = join(dir, 'x.log');
      const { logging, log } = setup({
        logToStderr: false,
        logFile: file,
        flushFrequencyMs: 2000,
        skipLogHeaders: true,
      });
      log.info('buffered');
      expect(existsSync(file)).toBe(false);
      jest.advanceTimersByTime(1999);
      expect(existsSync(file)).toBe(false);
      jest.advanceTimersByTime(1);
      expect(readFileSync(file, 'utf8')).toBe('I1122 10:00:00.123456    1234 file.ts:42] "buffered"\n');
      await logging.close();
    } finally {
      jest.useRealTimers();
    }
  });

  it('rotates --log-file at --log-file-max-size and keeps the lines in order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logfile-'));
    const file = join(dir, 'x.log');
    // 1 MB limit; each flush of ~0.3 MB goes to the current file until it would overflow.
    const { logging, log } = setup({
      logToStderr: false,
      logFile: file,
      logFileMaxSizeMB: 1,
      skipLogHeaders: true,
      skipHeaders: true,
    });
    const big = 'x'.repeat(1000);
    for (let i = 0; i < 3000; i++) log.info('line', { i, big });
    await logging.close();
    expect(statSync(file).size).toBeLessThanOrEqual(1024 * 1024);
    expect(statSync(`${file}.1`).size).toBeLessThanOrEqual(1024 * 1024);
    // ~3 MB in 1 MB files: x.log.3 (oldest) … x.log.
    expect(existsSync(`${file}.4`)).toBe(false);
    const all = [`${file}.3`, `${file}.2`, `${file}.1`, file].map((f) => readFileSync(f, 'utf8')).join('');
    const indexes = all
      .trim()
      .split('\n')
      .map((l) => Number(/ i=(\d+) /.exec(l)![1]));
    expect(indexes).toEqual(Array.from({ length: 3000 }, (_, i) => i));
  });
});
