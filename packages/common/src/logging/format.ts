/**
 * Line formats: klog's structured text (`I1122 10:00:00.000000    1234 file.ts:42] "message" key="value"`) and
 * Kubernetes' JSON (`{"ts":1606221451826.28,"msg":"message","v":0,"key":"value"}`). Pure functions; the caller
 * supplies time, pid and call site.
 */
import { goQuote } from '../options/duration';

import { type SeverityIndex } from './config';

/** Structured data of a log line: constant message, data in fields. */
export type Fields = Readonly<Record<string, unknown>>;

const SEVERITY_CHARS = 'IWEF';

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

let cachedSecond = -1;
let cachedPrefix = '';

/** `MMDD hh:mm:ss.uuuuuu` in local time (as klog prints), from epoch milliseconds (fractions give microseconds). */
export function formatHeaderTime(epochMs: number): string {
  const second = Math.floor(epochMs / 1000);
  if (second !== cachedSecond) {
    const d = new Date(second * 1000);
    cachedPrefix = `${pad2(d.getMonth() + 1)}${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
    cachedSecond = second;
  }
  const micros = Math.floor((epochMs - second * 1000) * 1000);
  return `${cachedPrefix}.${String(micros).padStart(6, '0')}`;
}

/** klog's header: severity letter, time, pid right-aligned in 7, `file:line] `. */
export function formatHeader(
  severity: SeverityIndex,
  epochMs: number,
  pid: number,
  file: string,
  line: number,
): string {
  return `${SEVERITY_CHARS[severity]}${formatHeaderTime(epochMs)} ${String(pid).padStart(7)} ${file}:${line}] `;
}

/** One value as klog's `kvListFormat` writes it: strings and errors quoted, numbers and bools bare. */
export function formatTextValue(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return goQuote(v);
    case 'number':
    case 'bigint':
    case 'boolean':
      return String(v);
    case 'undefined':
      return '<nil>';
    case 'symbol':
    case 'function':
      return goQuote(String(v));
  }
  if (v === null) return '<nil>';
  if (v instanceof Error) return goQuote(v.message);
  if (v instanceof Date) return goQuote(v.toISOString());
  try {
    return JSON.stringify(v) ?? '<nil>';
  } catch {
    return goQuote(String(v));
  }
}

/** Body of a structured text line: `"message" k1="v" k2=3`. */
export function formatTextBody(msg: string, fields: Fields | undefined, prefix: string): string {
  let out = goQuote(msg) + prefix;
  if (fields) {
    for (const k in fields) out += ` ${k}=${formatTextValue(fields[k])}`;
  }
  return out;
}

/** `key="v"` pairs (leading space each) for fields carried by a child logger. */
export function formatTextFields(fields: Fields): string {
  return formatTextBody('', fields, '').slice(3);
}

function jsonValue(v: unknown): unknown {
  if (v instanceof Error) return v.message;
  if (typeof v === 'bigint') return v.toString();
  return v;
}

/**
 * A JSON line as Kubernetes 1.21's zap encoder writes it: `ts` (epoch milliseconds with microsecond fraction),
 * `caller` (`dir/file:line`, when known), `msg`, `v` for info lines (Kubernetes omits it on errors), then fields in
 * order. Fields named `ts`, `caller`, `msg` or `v` are not overwritten.
 */
export function formatJsonLine(
  severity: SeverityIndex,
  verbosity: number,
  epochMs: number,
  msg: string,
  fields: Fields | undefined,
  caller?: string,
): string {
  const obj: Record<string, unknown> = { ts: Math.round(epochMs * 1000) / 1000 };
  if (caller !== undefined) obj.caller = caller;
  obj.msg = msg;
  if (severity === 0) obj.v = verbosity;
  if (fields) {
    for (const k in fields) {
      if (k === 'ts' || k === 'msg' || k === 'v' || k === 'caller') continue;
      obj[k] = jsonValue(fields[k]);
    }
  }
  try {
    return JSON.stringify(obj);
  } catch {
    return JSON.stringify({ ts: obj.ts, msg, err: 'unserializable log fields' });
  }
}
