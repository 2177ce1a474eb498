/**
 * The compiled load generator of the API server benchmark: `wrk` (Debian's, 4.1), for the phases where Node clients
 * cost the machine as much as the server they measure (a create or get costs a Node client 0.5-0.8 ms of CPU, a
 * list of 50 MB 150-280 ms; wrk, a C event loop per thread, a small fraction of that). It speaks HTTPS/1.1 only, each
 * connection one request at a time (no pipelining: the Lua scripts build one request per call).
 *
 * - {@link wrkRequests}: a fixed number of numbered requests (creates, gets), as the Node workers number them
 *   (`{name}` → `cm-000042`), thread t of T taking t, t+T, ...; every status checked in Lua. The latency of each
 *   request is taken in Lua (CLOCK_MONOTONIC through LuaJIT's FFI), its response matched by the object's name in
 *   the body: wrk's own histogram is "corrected" for coordinated omission (it adds made-up samples above twice the
 *   mean interval), which is not the per-request latency the table wants. wrk runs for a duration only, so a
 *   thread that has taken its share parks its connections (`delay()` of a day) and reports on stderr once its last
 *   response is in; the run is then interrupted (SIGINT, which wrk takes as the end of its duration) and reports.
 *   The rate is the total over the time from the first request sent to the last response (as the workers count).
 * - {@link wrkSequential}: one connection sending one request after another, a fixed number of times (the lists of
 *   5,000): each one's time from building the request to its last byte, every status checked.
 * - {@link wrkListLoop}: clients listing one path for a duration (the large lists), a thread and connection each:
 *   what was served in time and each list's time (from its request to the next one's); bodies are parsed by wrk as
 *   they come, never kept.
 *
 * wrk's CPU is read from this process's `cutime`/`cstime` once it has exited (`childrenCpuSeconds` of bench-server).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where wrk is, or why it is not there (installing Debian's `wrk` first when we are root, as etcd is). */
export function ensureWrk(): { path?: string; why?: string } {
  const find = (): string | undefined => {
    try {
      return execFileSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).trim() || undefined;
    } catch {
      return undefined;
    }
  };
  const found = find();
  if (found) return { path: found };
  if (process.getuid?.() !== 0) return { why: 'wrk is not installed and we are not root (apt-get install wrk)' };
  try {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    execFileSync('apt-get', ['update'], { stdio: 'ignore', timeout: 300000 });
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'wrk'], {
      stdio: 'ignore',
      timeout: 300000,
      env,
    });
  } catch (e) {
    return { why: `apt-get install wrk failed: ${e instanceof Error ? e.message : String(e)}` };
  }
  const installed = find();
  return installed ? { path: installed } : { why: 'apt-get installed wrk but no wrk binary was found' };
}

/** The server and the bearer token the requests carry. */
export interface WrkTarget {
  url: string;
  token: string;
}

/** Numbered requests: `{name}` in `path` and `body` becomes `namePrefix` + `i % modulo` padded to 6 digits. */
export interface WrkRequests {
  method: string;
  path: string;
  body?: unknown;
  namePrefix: string;
  modulo?: number;
  total: number;
  connections: number;
  expect: number;
}

export interface WrkRequestsResult {
  perSecond: number;
  latenciesMs: number[];
}

/**
 * What both scripts start with: a monotonic clock in µs (LuaJIT's FFI; CLOCK_MONOTONIC, the clock of Node's
 * `process.hrtime`), and the threads, each told its number (`id`), for done() to read their figures.
 */
const PRELUDE_LUA = `
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clock, bench_timespec *ts);
]]
local ts = ffi.new("bench_timespec")
function now_us()
  ffi.C.clock_gettime(1, ts)
  return tonumber(ts.tv_sec) * 1000000 + tonumber(ts.tv_nsec) / 1000
end

local threads = {}
function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end
`;

/**
 * One thread's share of a fixed total over its connections, see the file's comment. A response is matched to its
 * request by the object's name in its body (wrk does not say which connection a response came on), for the latency
 * from building the request to the response's last byte; every status is checked. done() prints every thread's
 * figures as one JSON line.
 */
const REQUESTS_LUA = `${PRELUDE_LUA}
function init(args)
  method, template, expect = args[1], args[2], tonumber(args[4])
  total, modulo, prefix, nthreads = tonumber(args[5]), tonumber(args[6]), args[7], tonumber(args[8])
  body = nil
  if args[3] ~= "" then
    local f = assert(io.open(args[3], "rb"))
    body = f:read("*a")
    f:close()
    -- The body around its one "{name}", cut once: a request joins three strings rather than searching 10 KiB.
    local at = assert(body:find("{name}", 1, true))
    before, after = body:sub(1, at - 1), body:sub(at + 6)
  end
  wrk.headers["Authorization"] = "Bearer " .. args[9]
  if body then wrk.headers["Content-Type"] = "application/json" end
  namepattern = '"name":"(' .. prefix:gsub("%p", "%%%0") .. '%d%d%d%d%d%d)"'
  nexti, reserved, sent, received, bad, badstatus = id, 0, 0, 0, 0, ""
  quota = math.floor((total - id + nthreads - 1) / nthreads)
  latencies, started, first, last = {}, {}, 0, 0
  -- wrk calls request() once on thread 0 to check it before running: that call must not use a number.
  verifying = id == 0
end

-- Called before each request of a connection: once the thread's share is taken, the connection waits (a day).
function delay()
  if reserved >= quota then return 86400000 end
  reserved = reserved + 1
  return 0
end

function request()
  local name = string.format("%s%06d", prefix, modulo > 0 and nexti % modulo or nexti)
  local r = wrk.format(method, (template:gsub("{name}", name)), nil, body and before .. name .. after)
  if verifying then
    verifying = false
    return r
  end
  sent, nexti = sent + 1, nexti + nthreads
  local now = now_us()
  if sent == 1 then first = now end
  started[name] = now
  return r
end

function response(status, headers, body)
  last = now_us()
  received = received + 1
  local name = body:match(namepattern)
  if status ~= expect or not name or not started[name] then
    bad = bad + 1
    badstatus = tostring(status)
  else
    latencies[#latencies + 1] = last - started[name]
    started[name] = nil
  end
  if received == quota then
    io.stderr:write("done\\n")
    wrk.thread:stop()
  end
end

function done(summary)
  local out = {}
  for _, t in ipairs(threads) do
    local l = t:get("latencies")
    local ms = {}
    for i = 1, #l do ms[i] = string.format("%.3f", l[i] / 1000) end
    table.insert(out, string.format('{"received":%d,"bad":%d,"badStatus":"%s","firstUs":%.3f,"lastUs":%.3f,"latenciesMs":[%s]}',
      t:get("received"), t:get("bad"), t:get("badstatus"), t:get("first"), t:get("last"), table.concat(ms, ",")))
  end
  io.write("[" .. table.concat(out, ",") .. "]\\n")
end
`;

/**
 * One thread, one connection listing one path until wrk's duration ends. No response() (wrk then keeps no body):
 * each list's time is from its request to the next one's (built as the last byte is in); the status is counted by
 * wrk (errors.status: > 399).
 */
const LIST_LUA = `${PRELUDE_LUA}
function init(args)
  wrk.headers["Authorization"] = "Bearer " .. args[1]
  req = wrk.format()
  starts = {}
  verifying = id == 0
end

function request()
  if verifying then
    verifying = false
  else
    starts[#starts + 1] = now_us()
  end
  return req
end

function done(summary)
  local durations = {}
  for _, t in ipairs(threads) do
    local s = t:get("starts")
    for i = 2, #s do durations[#durations + 1] = string.format("%.3f", (s[i] - s[i - 1]) / 1000) end
  end
  local e = summary.errors
  io.write(string.format('{"served":%d,"status":%d,"errors":%d,"durationsMs":[%s]}\\n', summary.requests, e.status,
    e.connect + e.read + e.write, table.concat(durations, ",")))
end
`;

/**
 * One thread, one connection: `total` requests of one path one after another, each timed from building it to its
 * response's last byte. wrk keeps each body for response() (a copy, no parsing). done() prints the thread's figures.
 */
const SEQUENTIAL_LUA = `${PRELUDE_LUA}
function init(args)
  wrk.headers["Authorization"] = "Bearer " .. args[1]
  total, expect = tonumber(args[2]), tonumber(args[3])
  req = wrk.format()
  sent, received, bad, badstatus, started = 0, 0, 0, "", 0
  latencies = {}
  verifying = id == 0
end

function delay()
  if sent >= total then return 86400000 end
  return 0
end

function request()
  if verifying then
    verifying = false
    return req
  end
  sent = sent + 1
  started = now_us()
  return req
end

function response(status, headers, body)
  local t = now_us()
  received = received + 1
  if status ~= expect then
    bad = bad + 1
    badstatus = tostring(status)
  else
    latencies[#latencies + 1] = string.format("%.3f", (t - started) / 1000)
  end
  if received == total then
    io.stderr:write("done\\n")
    wrk.thread:stop()
  end
end

function done(summary)
  local t = threads[1]
  io.write(string.format('{"received":%d,"bad":%d,"badStatus":"%s","latenciesMs":[%s]}\\n', t:get("received"),
    t:get("bad"), t:get("badstatus"), table.concat(t:get("latencies"), ",")))
end
`;

/**
 * Runs wrk with `args`; `onLine` sees each stderr line as it comes, with `stop` to end wrk's run early; after
 * `stallMs`, the run is stopped anyway. stdout is given back.
 *
 * wrk's main thread sleeps for the duration and only a SIGINT it takes itself wakes it: one taken by a thread still
 * on its way out is lost, so `stop` sends it again until wrk is gone.
 */
function runWrk(
  wrk: string,
  args: string[],
  onLine: (line: string, stop: () => void) => void,
  stallMs?: number,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(wrk, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let interrupt: NodeJS.Timeout | undefined;
    const stop = (): void => {
      child.kill('SIGINT');
      interrupt ??= setInterval(() => child.kill('SIGINT'), 100);
    };
    const stall = stallMs === undefined ? undefined : setTimeout(stop, stallMs);
    let out = '';
    let err = '';
    let partial = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => {
      err = (err + c.toString('utf8')).slice(-4000);
      const lines = (partial + c.toString('utf8')).split('\n');
      partial = lines.pop()!;
      for (const line of lines) onLine(line, stop);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearInterval(interrupt);
      clearTimeout(stall);
      if (code === 0) resolve(out);
      else reject(new Error(`wrk ${args.join(' ')} exited with ${signal ?? code}: ${err}${out}`));
    });
  });
}

/** The result line of a script's done() (the one JSON line wrk prints after its own summary). */
function resultOf<T>(out: string, what: string): T {
  const line = out.split('\n').find((l) => l.startsWith('{') || l.startsWith('['));
  if (!line) throw new Error(`${what}: wrk printed no result: ${out}`);
  return JSON.parse(line) as T;
}

/** A temp dir with the scripts (and the body) of one run, removed after it. */
async function withScripts<T>(f: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
  try {
    writeFileSync(join(dir, 'requests.lua'), REQUESTS_LUA);
    writeFileSync(join(dir, 'list.lua'), LIST_LUA);
    writeFileSync(join(dir, 'sequential.lua'), SEQUENTIAL_LUA);
    return await f(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What one wrk thread of {@link wrkRequests} did. */
interface ThreadResult {
  received: number;
  bad: number;
  badStatus: string;
  firstUs: number;
  lastUs: number;
  latenciesMs: number[];
}

/**
 * `job.total` requests over `job.connections` connections, one request at a time each, in one or two wrk threads
 * (a thread per CPU of the benchmark machine is plenty; more threads cost more CPU per request): the rate from the
 * first request sent to the last response, and every latency. Fails, naming a status, when any response is not
 * `job.expect` or does not name its object. With `modulo`, a name comes back every `modulo` requests: more than the
 * connections, so that no name is in flight twice.
 */
export function wrkRequests(wrk: string, t: WrkTarget, job: WrkRequests): Promise<WrkRequestsResult> {
  const connections = Math.max(1, Math.min(job.connections, job.total));
  if (job.modulo !== undefined && job.modulo <= connections) {
    throw new Error(
      `wrk requests: the names repeat every ${job.modulo}, want more than the ${connections} connections`,
    );
  }
  const threads = connections % 2 === 0 ? 2 : 1;
  return withScripts(async (dir) => {
    const bodyFile = job.body === undefined ? '' : join(dir, 'body.json');
    if (job.body !== undefined) writeFileSync(bodyFile, JSON.stringify(job.body));
    let done = 0;
    const what = `${job.method} ${job.path}`;
    const out = await runWrk(
      wrk,
      [
        `-t${threads}`,
        `-c${connections}`,
        '-d3600s',
        '--timeout=60s',
        '-s',
        join(dir, 'requests.lua'),
        t.url,
        '--',
        job.method,
        job.path,
        bodyFile,
        String(job.expect),
        String(job.total),
        String(job.modulo ?? 0),
        job.namePrefix,
        String(threads),
        t.token,
      ],
      // Every thread has its last response: the end of wrk's "duration".
      (line, stop) => {
        if (line === 'done' && ++done === threads) stop();
      },
      // A request lost with its connection would leave a thread short of its share for ever: at 10 requests/s at
      // the least, wrk is stopped, and the count below fails the run.
      Math.max(120_000, job.total * 100),
    );
    const results = resultOf<ThreadResult[]>(out, what);
    const received = results.reduce((a, r) => a + r.received, 0);
    const bad = results.reduce((a, r) => a + r.bad, 0);
    if (bad > 0) {
      const one = results.find((r) => r.bad > 0)!.badStatus;
      throw new Error(`${what}: ${bad} of ${received} responses were not ${job.expect} (one: ${one})`);
    }
    if (received !== job.total) throw new Error(`${what}: wrk received ${received} responses of ${job.total}`);
    const firstUs = Math.min(...results.map((r) => r.firstUs));
    const lastUs = Math.max(...results.map((r) => r.lastUs));
    return {
      perSecond: job.total / ((lastUs - firstUs) / 1e6),
      latenciesMs: results.flatMap((r) => r.latenciesMs),
    };
  });
}

/**
 * `total` requests of `path` on one connection, one after another (see SEQUENTIAL_LUA): each one's latency, in
 * order. Fails, naming a status, when any response is not `expect`.
 */
export function wrkSequential(wrk: string, t: WrkTarget, path: string, total: number, expect = 200): Promise<number[]> {
  return withScripts(async (dir) => {
    const what = `GET ${path}`;
    const out = await runWrk(
      wrk,
      ['-t1', '-c1', '-d3600s', '--timeout=120s', '-s', join(dir, 'sequential.lua'), `${t.url}${path}`, '--'].concat([
        t.token,
        String(total),
        String(expect),
      ]),
      (line, stop) => {
        if (line === 'done') stop();
      },
      Math.max(120_000, total * 10_000),
    );
    const r = resultOf<{ received: number; bad: number; badStatus: string; latenciesMs: number[] }>(out, what);
    if (r.bad > 0)
      throw new Error(`${what}: ${r.bad} of ${r.received} responses were not ${expect} (one: ${r.badStatus})`);
    if (r.received !== total) throw new Error(`${what}: wrk received ${r.received} responses of ${total}`);
    return r.latenciesMs;
  });
}

/** What clients listing one path for a while did: lists served in time, each one's duration (ms). */
export interface WrkListResult {
  served: number;
  durationsMs: number[];
}

/**
 * `clients` clients (a wrk thread and connection each) listing `path` one list after another for `seconds`: the
 * lists that ended in time (wrk drops the ones in flight at the end) and their durations. Fails on any status > 399.
 */
export function wrkListLoop(
  wrk: string,
  t: WrkTarget,
  path: string,
  clients: number,
  seconds: number,
): Promise<WrkListResult> {
  return withScripts(async (dir) => {
    const out = await runWrk(
      wrk,
      [
        `-t${clients}`,
        `-c${clients}`,
        `-d${seconds}s`,
        '--timeout=120s',
        '-s',
        join(dir, 'list.lua'),
        `${t.url}${path}`,
        '--',
        t.token,
      ],
      () => undefined,
    );
    const r = resultOf<{ served: number; status: number; errors: number; durationsMs: number[] }>(out, `GET ${path}`);
    if (r.status > 0) throw new Error(`GET ${path}: ${r.status} of the lists had a status > 399`);
    if (r.errors > 0) throw new Error(`GET ${path}: ${r.errors} connection errors`);
    return { served: r.served, durationsMs: r.durationsMs };
  });
}
