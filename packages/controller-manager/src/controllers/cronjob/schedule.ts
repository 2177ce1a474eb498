/**
 * Cron schedules as Kubernetes 1.21's CronJob controller reads them (`cron.ParseStandard` of robfig/cron v3):
 * five fields (minute, hour, day of month, month, day of week) with `*`, `?`, lists, ranges, steps and the month
 * and weekday names; the descriptors `@yearly`/`@annually`, `@monthly`, `@weekly`, `@daily`/`@midnight`,
 * `@hourly` and `@every <duration>`; and a leading `CRON_TZ=<zone>` or `TZ=<zone>` naming the IANA time zone the
 * fields are read in (the controller's local zone otherwise). As in robfig/cron, when both day fields are
 * restricted a day matching either runs, and wall times a daylight-saving jump skips never run.
 */

/** A parsed schedule: the first activation strictly after a time. */
export interface Schedule {
  /** The first activation after `afterMs` (ms since the epoch), or undefined if there is none within 5 years. */
  next(afterMs: number): number | undefined;
}

/** A schedule that cannot be parsed; the message is robfig/cron's. */
export class ScheduleParseError extends Error {}

interface Bounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}

const MONTH_NAMES: Record<string, number> = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};
const DOW_NAMES: Record<string, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };

const FIELDS: Bounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTH_NAMES },
  { min: 0, max: 6, names: DOW_NAMES },
];

const DESCRIPTORS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

function parseNumber(s: string, b: Bounds): number {
  const named = b.names?.[s.toLowerCase()];
  if (named !== undefined) return named;
  if (!/^[0-9]+$/.test(s))
    throw new ScheduleParseError(`failed to parse int from ${s}: strconv.Atoi: parsing "${s}": invalid syntax`);
  return Number(s);
}

/** One field: the set of allowed values, and whether it was `*` or `?` (robfig's star bit). */
interface Field {
  values: Set<number>;
  star: boolean;
}

function parseField(text: string, b: Bounds): Field {
  const values = new Set<number>();
  let star = false;
  for (const part of text.split(',')) {
    const [range = '', stepText, extra] = part.split('/');
    if (extra !== undefined) throw new ScheduleParseError(`too many slashes: ${part}`);
    let lo: number;
    let hi: number;
    let step = 1;
    if (range === '*' || range === '?') {
      lo = b.min;
      hi = b.max;
      if (stepText === undefined) star = true;
    } else {
      const bounds = range.split('-');
      if (bounds.length > 2) throw new ScheduleParseError(`too many hyphens: ${range}`);
      lo = parseNumber(bounds[0] ?? '', b);
      hi = bounds.length === 2 ? parseNumber(bounds[1] ?? '', b) : lo;
      // `5/10` means `5-max/10`.
      if (bounds.length === 1 && stepText !== undefined) hi = b.max;
    }
    if (stepText !== undefined) {
      step = parseNumber(stepText, { min: 0, max: 0 });
      if (step === 0) throw new ScheduleParseError(`step of range should be a positive number: ${part}`);
    }
    if (lo < b.min) throw new ScheduleParseError(`beginning of range (${lo}) below minimum (${b.min}): ${part}`);
    if (hi > b.max) throw new ScheduleParseError(`end of range (${hi}) above maximum (${b.max}): ${part}`);
    if (lo > hi) throw new ScheduleParseError(`beginning of range (${lo}) beyond end of range (${hi}): ${part}`);
    for (let v = lo; v <= hi; v += step) values.add(v);
  }
  return { values, star };
}

/** Parses a Go duration (`1h30m`, `90s`, `500ms`) into milliseconds. */
function parseGoDuration(s: string): number {
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const re = /([0-9]+(?:\.[0-9]*)?)(ns|us|µs|ms|s|m|h)/gy;
  if (!s) throw new ScheduleParseError(`failed to parse duration @every ${s}: time: invalid duration ""`);
  let total = 0;
  let pos = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    total += Number(m[1]) * (units[m[2] ?? ''] ?? 0);
    pos = re.lastIndex;
  }
  if (pos !== s.length)
    throw new ScheduleParseError(`failed to parse duration @every ${s}: time: invalid duration "${s}"`);
  return total;
}

/** The UTC offset (ms) of `zone` at instant `t`. */
function zoneOffset(zone: string, t: number): number {
  if (zone === 'UTC' || zone === 'Etc/UTC') return 0;
  const f = formatterFor(zone);
  const parts: Record<string, number> = {};
  for (const p of f.formatToParts(new Date(t))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const wall = Date.UTC(
    parts.year ?? 1970,
    (parts.month ?? 1) - 1,
    parts.day ?? 1,
    (parts.hour ?? 0) % 24,
    parts.minute ?? 0,
    parts.second ?? 0,
  );
  return wall - Math.floor(t / 1000) * 1000;
}

const FORMATTERS = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let f = FORMATTERS.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    FORMATTERS.set(zone, f);
  }
  return f;
}

/** The instant of a wall-clock time in `zone`, or undefined when a daylight-saving jump skips it. */
function wallToInstant(zone: string, wallMs: number): number | undefined {
  let t = wallMs - zoneOffset(zone, wallMs);
  t = wallMs - zoneOffset(zone, t);
  return t + zoneOffset(zone, t) === wallMs ? t : undefined;
}

class SpecSchedule implements Schedule {
  constructor(
    private readonly f: Field[],
    private readonly zone: string,
  ) {}

  private dayMatches(y: number, m: number, d: number): boolean {
    const [, , dom, , dow] = this.f as [Field, Field, Field, Field, Field];
    const domOk = dom.values.has(d);
    const dowOk = dow.values.has(new Date(Date.UTC(y, m - 1, d)).getUTCDay());
    return dom.star || dow.star ? domOk && dowOk : domOk || dowOk;
  }

  next(afterMs: number): number | undefined {
    const [min, hour, , month] = this.f as [Field, Field, Field, Field];
    // Start from the wall-clock minute after `afterMs` in the zone, and walk days, hours and minutes.
    const start = Math.floor(afterMs / 60_000) * 60_000 + 60_000;
    const wallStart = start + zoneOffset(this.zone, start);
    const first = new Date(wallStart);
    const hours = [...hour.values].sort((a, b) => a - b);
    const minutes = [...min.values].sort((a, b) => a - b);
    for (let day = 0; day < 366 * 5; day++) {
      const date = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), first.getUTCDate() + day));
      const y = date.getUTCFullYear();
      const m = date.getUTCMonth() + 1;
      const d = date.getUTCDate();
      if (!month.values.has(m) || !this.dayMatches(y, m, d)) continue;
      for (const h of hours) {
        for (const mi of minutes) {
          const wall = Date.UTC(y, m - 1, d, h, mi);
          if (wall < wallStart - 3_600_000 * 3) continue;
          const t = wallToInstant(this.zone, wall);
          if (t !== undefined && t >= start) return t;
        }
      }
    }
    return undefined;
  }
}

/** `@every <duration>`: activations every duration (at least a second), on whole seconds. */
class EverySchedule implements Schedule {
  constructor(private readonly everyMs: number) {}

  next(afterMs: number): number {
    return Math.floor(afterMs / 1000) * 1000 + this.everyMs;
  }
}

/** The local time zone of this process (what Go's `time.Local` is to kube-controller-manager). */
export function localZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** Parses a standard cron schedule (see the module comment); throws {@link ScheduleParseError}. */
export function parseSchedule(spec: string, defaultZone = localZone()): Schedule {
  let text = spec.trim();
  if (text.length === 0) throw new ScheduleParseError('empty spec string');
  let zone = defaultZone;
  const tz = /^(?:CRON_TZ|TZ)=(\S*)/.exec(text);
  if (tz) {
    zone = tz[1] ?? '';
    try {
      formatterFor(zone);
    } catch {
      throw new ScheduleParseError(`provided bad location ${zone}: unknown time zone ${zone}`);
    }
    text = text.slice(tz[0].length).trim();
  }
  if (text.startsWith('@')) {
    if (text.startsWith('@every ')) {
      const ms = parseGoDuration(text.slice('@every '.length).trim());
      return new EverySchedule(Math.max(1000, Math.floor(ms / 1000) * 1000));
    }
    const expanded = DESCRIPTORS[text];
    if (!expanded) throw new ScheduleParseError(`unrecognized descriptor: ${text}`);
    text = expanded;
  }
  const fields = text.split(/\s+/);
  if (fields.length !== 5)
    throw new ScheduleParseError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  return new SpecSchedule(
    fields.map((f, i) => parseField(f, FIELDS[i] as Bounds)),
    zone,
  );
}
