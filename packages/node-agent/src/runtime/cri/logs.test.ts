import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describeWithContainerd, startContainerd, TEST_IMAGE, type TestContainerd } from '../../testing/containerd';
import { CriRuntime } from './cri-runtime';
import { ContainerLogRotator, parseCriLogLine, readCriLog, rotatedLogs } from './logs';

const T1 = '2026-11-26T04:00:00.000000001Z';
const T2 = '2026-11-26T04:00:01.500000000Z';
const T3 = '2026-11-26T04:00:02.000000000Z';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'crilog-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function read(path: string, o: Parameters<typeof readCriLog>[2] = {}): Promise<string> {
  let out = '';
  await readCriLog(path, (s) => void (out += s), o);
  return out;
}

test('parses CRI log lines and rejects others', () => {
  expect(parseCriLogLine(`${T1} stdout F hello world`)).toEqual({
    time: T1,
    timeMs: Date.parse(T1),
    stream: 'stdout',
    partial: false,
    content: 'hello world',
  });
  expect(parseCriLogLine(`${T1} stderr P `)?.content).toBe('');
  expect(parseCriLogLine('garbage')).toBeUndefined();
  expect(parseCriLogLine(`${T1} stdin F x`)).toBeUndefined();
});

test('reads whole lines, joins partial entries, and honours tail, since, timestamps, stream and limit', async () => {
  const f = join(dir, 'a.log');
  writeFileSync(
    f,
    [
      `${T1} stdout F one`,
      `${T1} stderr F err`,
      `${T2} stdout P tw`,
      `${T2} stdout F o`,
      `${T3} stdout F three`,
      `${T3} stdout F incomplete-without-newline`,
    ].join('\n'),
  );
  expect(await read(f)).toBe('one\nerr\ntwo\nthree\n');
  expect(await read(f, { tailLines: 2 })).toBe('two\nthree\n');
  expect(await read(f, { sinceTimeMs: Date.parse(T2) })).toBe('two\nthree\n');
  expect(await read(f, { timestamps: true, tailLines: 1 })).toBe(`${T3} three\n`);
  expect(await read(f, { stream: 'stderr' })).toBe('err\n');
  expect(await read(f, { limitBytes: 6 })).toBe('one\ner');
  expect(await read(join(dir, 'absent.log'))).toBe('');
});

test('follows a growing file across a rotation until told the container is done', async () => {
  const f = join(dir, 'b.log');
  writeFileSync(f, `${T1} stdout F first\n`);
  let done = false;
  let out = '';
  const reading = readCriLog(f, (s) => void (out += s), { follow: true, isDone: () => done });
  const until = async (text: string): Promise<void> => {
    const deadline = Date.now() + 10000;
    while (!out.includes(text)) {
      if (Date.now() > deadline) throw new Error(`no ${text} in ${JSON.stringify(out)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  await until('first');
  appendFileSync(f, `${T2} stdout F second\n`);
  await until('second');
  renameSync(f, `${f}.20261126-040000.000`);
  writeFileSync(f, `${T3} stdout F after-rotation\n`);
  await until('after-rotation');
  done = true;
  await reading;
  expect(out).toBe('first\nsecond\nafter-rotation\n');
});

test('follow stops when aborted', async () => {
  const f = join(dir, 'c.log');
  writeFileSync(f, '');
  const ac = new AbortController();
  const reading = readCriLog(f, () => undefined, { follow: true, signal: ac.signal });
  setTimeout(() => ac.abort(), 50);
  await reading;
});

describeWithContainerd('log rotation against a real containerd', () => {
  let ctrd: TestContainerd;
  let rt: CriRuntime;

  beforeAll(async () => {
    ctrd = await startContainerd();
    rt = new CriRuntime({ endpoint: ctrd.endpoint, requestTimeoutMs: 30000 });
  }, 60000);

  afterAll(async () => {
    await rt?.close();
    await ctrd?.stop();
  }, 60000);

  test('rotates by size, the runtime reopens the file, old files are gzipped and at most max-files remain', async () => {
    const logDirectory = join(ctrd.logDir, 'default_logger_u');
    mkdirSync(logDirectory, { recursive: true });
    const sc = {
      metadata: { name: 'logger', namespace: 'default', uid: 'u', attempt: 0 },
      logDirectory,
      labels: {},
      annotations: {},
      linux: {
        cgroupParent: `${ctrd.cgroupParent}/podu`,
        securityContext: { namespaceOptions: { network: 'NODE' as const } },
      },
    };
    const sandboxId = await rt.runPodSandbox(sc);
    const id = await rt.createContainer(
      sandboxId,
      {
        metadata: { name: 'c', attempt: 0 },
        image: TEST_IMAGE,
        command: ['sh', '-c', 'i=0; while true; do i=$((i+1)); echo "line $i"; sleep 0.01; done'],
        args: [],
        envs: [],
        mounts: [],
        labels: {},
        annotations: {},
        logPath: 'c/0.log',
      },
      sc,
    );
    await rt.startContainer(id);
    const logPath = join(logDirectory, 'c/0.log');
    const rotator = new ContainerLogRotator(rt, { maxSizeBytes: 2000, maxFiles: 3 });
    let rotations = 0;
    const deadline = Date.now() + 30000;
    while (rotations < 4) {
      if (Date.now() > deadline) throw new Error(`only ${rotations} rotations`);
      if ((await rotator.rotateAll()).includes(id)) rotations++;
      await new Promise((r) => setTimeout(r, 100));
    }
    // containerd writes to the new file after the reopen.
    const grew = Date.now() + 10000;
    while (statSync(logPath).size === 0) {
      if (Date.now() > grew) throw new Error('the runtime did not reopen the log');
      await new Promise((r) => setTimeout(r, 50));
    }
    await rotator.rotateIfNeeded(id, logPath); // a pass that trims and compresses
    const rotated = rotatedLogs(logPath);
    expect(rotated.length).toBeLessThanOrEqual(2);
    expect(rotated.slice(0, -1).every((f) => f.endsWith('.gz'))).toBe(true);
    const oldest = rotated[0]!;
    const text = oldest.endsWith('.gz') ? gunzipSync(readFileSync(oldest)).toString() : readFileSync(oldest, 'utf8');
    expect(
      text
        .split('\n')
        .filter(Boolean)
        .every((l) => parseCriLogLine(l)?.content.startsWith('line ')),
    ).toBe(true);
    await rt.removePodSandbox(sandboxId);
  }, 60000);
});
