/**
 * Pieces of an audit event (model: apiserver `pkg/audit/request.go` and `format.go`): timestamps with microseconds,
 * the source IPs of a request, and the two log formats (one JSON object per line, or Kubernetes' legacy text line).
 */
import { type IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

import { type AuditEvent, type AuditResponseStatus, SHARED_JSON, type SharedJson, STAGES } from './types';

/** Milliseconds since the epoch with sub-millisecond precision (the default clock of events). */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

/** RFC 3339 with six fractional digits in UTC (Kubernetes' MicroTime): `2021-04-01T10:00:00.123456Z`. */
export function microTime(ms: number): string {
  const whole = Math.floor(ms);
  const micros = Math.min(999, Math.floor((ms - whole) * 1000));
  // Two events of a request, and the requests of one second, share the text up to the seconds.
  const second = Math.floor(whole / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    lastSecondText = new Date(second * 1000).toISOString().slice(0, 20); // ...T10:00:00.
  }
  return `${lastSecondText}${THREE_DIGITS[whole - second * 1000]}${THREE_DIGITS[micros]}Z`;
}

/** `000` to `999`. */
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

let lastSecond = NaN;
let lastSecondText = '';

/** The source IPs of a connection's requests that carry no forwarding headers. */
const peerIPs = new WeakMap<object, string[]>();

function normalizeIP(ip: string): string {
  return ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
}

/**
 * The source IPs of a request, as Kubernetes lists them: the valid entries of `X-Forwarded-For`, then `X-Real-Ip`
 * unless already listed, then the peer address unless it is the last one listed.
 */
export function sourceIPs(req: IncomingMessage): string[] {
  const xff = req.headers['x-forwarded-for'];
  const real = req.headers['x-real-ip'];
  if (xff === undefined && real === undefined) {
    // Only the peer: the same list for every request of a connection (events only read it).
    const socket = req.socket;
    if (!socket) return [];
    let peer = peerIPs.get(socket);
    if (peer === undefined) {
      const remote = socket.remoteAddress;
      peer = Object.freeze(remote && isIP(remote) ? [normalizeIP(remote)] : []) as string[];
      peerIPs.set(socket, peer);
    }
    return peer;
  }
  const ips: string[] = [];
  if (typeof xff === 'string' && xff !== '') {
    for (const part of xff.split(',')) {
      const ip = part.trim();
      if (isIP(ip)) ips.push(normalizeIP(ip));
    }
  }
  if (typeof real === 'string' && isIP(real.trim())) {
    const ip = normalizeIP(real.trim());
    if (!ips.includes(ip)) ips.push(ip);
  }
  const remote = req.socket?.remoteAddress;
  if (remote && isIP(remote)) {
    const ip = normalizeIP(remote);
    if (ips.length === 0 || ips[ips.length - 1] !== ip) ips.push(ip);
  }
  return ips;
}

/** Go's `%q` for the strings a legacy line carries (JSON quoting is the same for printable text). */
function q(s: string): string {
  return JSON.stringify(s);
}

/** RFC 3339 with nanosecond-style trimming (Go's RFC3339Nano drops trailing zeros). */
function rfc3339Nano(micro: string): string {
  return micro.replace(/\.?0+Z$/, 'Z');
}

/**
 * The legacy text line of an event (without the newline): `<time> AUDIT: id="..." stage="..." ip="..." method="..."
 * user="..." groups="..." as="<self>" asgroups="<lookup>" user-agent="..." namespace="..." uri="..." response="..."`.
 */
export function legacyLine(ev: AuditEvent): string {
  let user = '<none>';
  let groups = '<none>';
  if (ev.user.username) {
    user = ev.user.username;
    if (ev.user.groups && ev.user.groups.length > 0) groups = ev.user.groups.map(q).join(',');
  }
  let as = '<self>';
  let asGroups = '<lookup>';
  if (ev.impersonatedUser) {
    as = ev.impersonatedUser.username ?? '';
    if (ev.impersonatedUser.groups) asGroups = ev.impersonatedUser.groups.map(q).join(',');
  }
  const namespace = ev.objectRef?.namespace || '<none>';
  const response = ev.responseStatus ? String(ev.responseStatus.code) : '<deferred>';
  const ip = ev.sourceIPs?.[0] ?? '<unknown>';
  return (
    `${rfc3339Nano(ev.requestReceivedTimestamp)} AUDIT: id=${q(ev.auditID)} stage=${q(ev.stage)} ip=${q(ip)} ` +
    `method=${q(ev.verb)} user=${q(user)} groups=${q(groups)} as=${q(as)} asgroups=${q(asGroups)} ` +
    `user-agent=${q(ev.userAgent ?? '')} namespace=${q(namespace)} uri=${q(ev.requestURI)} response="${response}"`
  );
}

/** An event in the requested serialization version (the versions share one shape). */
export function inVersion(ev: AuditEvent, apiVersion: string): AuditEvent {
  return ev.apiVersion === apiVersion ? ev : { ...ev, apiVersion };
}

/** Whether `box` holds the text of `ev`'s common fields (they are the same objects as those it was written for). */
function sharesText(box: SharedJson | undefined, ev: AuditEvent, apiVersion: string): box is SharedJson {
  const o = box?.of;
  return (
    o !== undefined &&
    box!.apiVersion === apiVersion &&
    o.level === ev.level &&
    o.auditID === ev.auditID &&
    o.requestURI === ev.requestURI &&
    o.verb === ev.verb &&
    o.user === ev.user &&
    o.impersonatedUser === ev.impersonatedUser &&
    o.sourceIPs === ev.sourceIPs &&
    o.userAgent === ev.userAgent &&
    o.objectRef === ev.objectRef
  );
}

/**
 * One event as a JSON line (without the newline) in `apiVersion`: the same document as `JSON.stringify`, in three
 * parts. The fields the stages of a request share are written once, kept in the events' {@link SharedJson}.
 */
export function eventJson(ev: AuditEvent, apiVersion: string): string {
  const parts: string[] = [];
  eventJsonParts(ev, apiVersion, parts);
  return parts.join('');
}

/**
 * {@link eventJson} as pieces appended to `out`, for a writer that joins many events at once. Few, large
 * `JSON.stringify` calls: each call has a fixed cost that dwarfs the short strings of an event.
 */
export function eventJsonParts(ev: AuditEvent, apiVersion: string, out: string[]): void {
  let box = ev[SHARED_JSON];
  if (!sharesText(box, ev, apiVersion)) {
    box ??= { apiVersion, head: '', body: '' };
    box.of = ev;
    box.apiVersion = apiVersion;
    box.head = `{"kind":"Event","apiVersion":${JSON.stringify(apiVersion)},"level":${JSON.stringify(ev.level)},"auditID":${JSON.stringify(ev.auditID)},"stage":`;
    // Fields left undefined are left out, as in the whole event's JSON.
    const body = JSON.stringify({
      requestURI: ev.requestURI,
      verb: ev.verb,
      user: ev.user,
      impersonatedUser: ev.impersonatedUser,
      sourceIPs: ev.sourceIPs,
      userAgent: ev.userAgent,
      objectRef: ev.objectRef,
    });
    box.body = body.slice(1, -1);
  }
  const tail = JSON.stringify({
    responseStatus: ev.responseStatus,
    requestObject: ev.requestObject,
    responseObject: ev.responseObject,
    requestReceivedTimestamp: ev.requestReceivedTimestamp,
    stageTimestamp: ev.stageTimestamp,
    annotations: ev.annotations,
  });
  out.push(box.head, STAGE_JSON[ev.stage] ?? `${JSON.stringify(ev.stage)},`, box.body, ',', tail.slice(1));
}

const STAGE_JSON: Partial<Record<string, string>> = Object.fromEntries(
  STAGES.map((stage) => [stage, `${JSON.stringify(stage)},`]),
);

/**
 * The response status of most events, `{"metadata":{},"code":N}`: one shared (frozen) object per code.
 */
export function plainStatus(code: number): AuditResponseStatus {
  let s = plainStatuses.get(code);
  if (s === undefined) {
    s = Object.freeze({ metadata: Object.freeze({}), code }) as AuditResponseStatus;
    if (plainStatuses.size < 1000) plainStatuses.set(code, s);
  }
  return s;
}

const plainStatuses = new Map<number, AuditResponseStatus>();
