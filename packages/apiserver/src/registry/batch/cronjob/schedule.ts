/**
 * Cron schedules as CronJobs take them (model: `github.com/robfig/cron` `ParseStandard`, which Kubernetes 1.21's
 * CronJob validation uses): five fields (minute, hour, day of month, month, day of week) of `*`, `?`, numbers,
 * names (JAN-DEC, SUN-SAT), ranges, steps and lists; or one of the descriptors `@yearly`, `@annually`, `@monthly`,
 * `@weekly`, `@daily`, `@midnight`, `@hourly`, `@every <duration>`.
 */

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: Record<string, number>;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

const FIELDS: FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: Object.fromEntries(MONTHS.map((m, i) => [m, i + 1])) },
  { name: 'day of week', min: 0, max: 6, names: Object.fromEntries(DAYS.map((d, i) => [d, i])) },
];

const DESCRIPTORS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

function parseValue(text: string, f: FieldSpec): number {
  const named = f.names?.[text.toLowerCase()];
  if (named !== undefined) return named;
  if (!/^\d+$/.test(text))
    throw new Error(`failed to parse int from ${text}: strconv.Atoi: parsing "${text}": invalid syntax`);
  return Number(text);
}

function parseRange(expr: string, f: FieldSpec): void {
  const [rangeText = '', stepText] = expr.split('/');
  if (expr.split('/').length > 2) throw new Error(`too many slashes: ${expr}`);
  let start: number;
  let end: number;
  if (rangeText === '*' || rangeText === '?') {
    start = f.min;
    end = f.max;
  } else {
    const bounds = rangeText.split('-');
    if (bounds.length > 2) throw new Error(`too many hyphens: ${expr}`);
    start = parseValue(bounds[0] ?? '', f);
    end = bounds.length === 2 ? parseValue(bounds[1] ?? '', f) : start;
  }
  if (stepText !== undefined) {
    const step = parseValue(stepText, f);
    if (step <= 0) throw new Error(`step of range should be a positive number: ${expr}`);
  }
  if (start < f.min) throw new Error(`beginning of range (${start}) below minimum (${f.min}): ${expr}`);
  if (end > f.max) throw new Error(`end of range (${end}) above maximum (${f.max}): ${expr}`);
  if (start > end) throw new Error(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
}

/** Parses a schedule; throws an Error whose message says what is wrong. */
export function parseSchedule(schedule: string): void {
  const text = schedule.trim();
  if (text.length === 0) throw new Error('empty spec string');
  if (text.startsWith('@')) {
    if (DESCRIPTORS.has(text)) return;
    if (text.startsWith('@every ')) {
      const d = text.slice('@every '.length).trim();
      if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(d))
        throw new Error(`failed to parse duration ${text}: time: invalid duration "${d}"`);
      return;
    }
    throw new Error(`unrecognized descriptor: ${text}`);
  }
  const fields = text.split(/\s+/);
  if (fields.length !== 5) throw new Error(`expected exactly 5 fields, found ${fields.length}: ${text}`);
  fields.forEach((value, i) => {
    const spec = FIELDS[i] as FieldSpec;
    for (const part of value.split(',')) parseRange(part, spec);
  });
}
