/**
 * The flag machinery under every option family: a flag is declared once as a {@link FlagDef} (name, type, default,
 * help, deprecation, how a raw value is stored), registered on a commander `Command`, parsed with pflag semantics
 * (bool flags take `--x` or `--x=false`; repeatable list flags accumulate, the first occurrence replacing the
 * default), and described for `--help` and the generated reference pages. Bad values do not stop parsing: each one
 * is recorded as a {@link FlagError} naming the flag, so `main` can print every problem at once.
 */
import { type Command, CommanderError, Option } from 'commander';

import { formatDuration } from './duration';
import {
  type IntRange,
  type PortRange,
  FlagError,
  flagError,
  formatPortRange,
  parseBool,
  parseCIDR,
  parseDurationValue,
  parseFloat64,
  parseIP,
  parseInteger,
  parseKeyValueMap,
  parsePortRange,
  parseStringList,
} from './parsers';

/** One flag: what the user types, what help shows, and how a value is stored. */
export interface FlagDef {
  /** Long name without dashes (`log-flush-frequency`). */
  readonly name: string;
  /** Single-letter shorthand without dash (`v`, `h`). */
  readonly short?: string;
  /** Type shown in help (`bool`, `int`, `duration`, `string`, `strings`, `mapStringString` ...). */
  readonly type: string;
  /** Help text: one sentence or more, no trailing default. */
  readonly usage: string;
  /** Default as shown in help; the empty string shows no default. */
  readonly defaultText: string;
  /** When set, the flag is deprecated: still accepted, and using it prints `Flag --x has been deprecated, <msg>`. */
  readonly deprecated?: string;
  /** Value used when the flag is given without `=value` (bool flags: `true`). Absent: a value is required. */
  readonly noOptDefVal?: string;
  /** Parses one occurrence and stores it; throws (any error) with the reason when the text is invalid. */
  set(raw: string): void;
}

/** Where a flag's parse errors, warnings and "was it set" state are kept (one per option family). */
export class FlagRecorder {
  /** Values rejected while parsing, in command-line order. */
  readonly errors: FlagError[] = [];
  /** Deprecation warnings, once per deprecated flag used. */
  readonly warnings: string[] = [];
  /** Long names of the flags that appeared on the command line. */
  readonly changed = new Set<string>();
  readonly defs: FlagDef[] = [];

  constructor(readonly section: string) {}

  /** Registers `def` on `cmd`. Throws if `cmd` already has a flag of that name (a programming error). */
  add(cmd: Command, def: FlagDef): void {
    const flags = `${def.short ? `-${def.short}, ` : ''}--${def.name} ${def.noOptDefVal !== undefined ? '[value]' : '<value>'}`;
    const option = new Option(flags, def.usage);
    const display = def.short ? `-${def.short}, --${def.name}` : `--${def.name}`;
    if (def.noOptDefVal !== undefined) option.preset(def.noOptDefVal);
    option.argParser((raw: string) => {
      if (def.deprecated !== undefined && !this.changed.has(def.name)) {
        this.warnings.push(deprecationWarning(def.name, def.deprecated));
      }
      this.changed.add(def.name);
      try {
        def.set(raw);
      } catch (err) {
        this.errors.push(flagError(display, raw, err));
      }
      return raw;
    });
    cmd.addOption(option);
    FLAG_META.set(option, { def, section: this.section });
    this.defs.push(def);
  }
}

/**
 * Marks a flag deprecated (Kubernetes' `MarkDeprecated`): still accepted; using it warns
 * `Flag --x has been deprecated, <message>`, and help and docs show `(DEPRECATED: <message>)`.
 */
export function deprecated(def: FlagDef, message: string): FlagDef {
  return { ...def, deprecated: message, set: (raw) => def.set(raw) };
}

/** The warning pflag prints when a deprecated flag is used: `Flag --x has been deprecated, <message>`. */
export function deprecationWarning(name: string, message: string): string {
  return `Flag --${name} has been deprecated, ${message}`;
}

const FLAG_META = new WeakMap<Option, { def: FlagDef; section: string }>();

/** A described flag, as `--help` and the reference pages show it. */
export interface FlagDescription {
  name: string;
  short?: string;
  type: string;
  usage: string;
  defaultText: string;
  deprecated?: string;
}

/** Flags of one option family, in declaration order. */
export interface FlagSection {
  name: string;
  flags: FlagDescription[];
}

/** Lists the flags registered on `cmd` through {@link FlagRecorder}, grouped by family in registration order. */
export function describeFlags(cmd: Command): FlagSection[] {
  const sections = new Map<string, FlagDescription[]>();
  for (const option of cmd.options) {
    const meta = FLAG_META.get(option);
    if (!meta) continue;
    const { def } = meta;
    const list = sections.get(meta.section) ?? [];
    list.push({
      name: def.name,
      ...(def.short ? { short: def.short } : {}),
      type: def.type,
      usage: def.usage,
      defaultText: def.defaultText,
      ...(def.deprecated !== undefined ? { deprecated: def.deprecated } : {}),
    });
    sections.set(meta.section, list);
  }
  return [...sections].map(([name, flags]) => ({ name, flags }));
}

/**
 * Renders help like the Kubernetes components (cobra + named flag sets): a usage line, then one block per family,
 * each flag with its type, help, `(default X)` and `(DEPRECATED: ...)`.
 */
export function renderHelp(cmd: Command): string {
  const sections = describeFlags(cmd);
  let out = '';
  const desc = cmd.description();
  if (desc) out += `${desc}\n\n`;
  out += `Usage:\n  ${cmd.name()} [flags]\n`;
  for (const section of sections) {
    out += `\n${section.name} flags:\n\n`;
    const heads = section.flags.map((f) => {
      const names = f.short ? `  -${f.short}, --${f.name}` : `      --${f.name}`;
      return f.type === 'bool' ? names : `${names} ${f.type}`;
    });
    const width = Math.max(...heads.map((h) => h.length));
    const indent = ' '.repeat(width + 3);
    section.flags.forEach((f, i) => {
      // Continuation lines (the feature gate list) are indented under the usage column, as pflag does.
      out += `${heads[i]!.padEnd(width)}   ${fullUsage(f, true).replace(/\n/g, `\n${indent}`)}\n`;
    });
  }
  out += `\nGlobal flags:\n\n  -h, --help   help for ${cmd.name()}\n`;
  return out;
}

/**
 * A flag's usage text with its default and deprecation note appended. With `hideZero` (help, as pflag), zero
 * defaults (`false`, `0`) are not shown.
 */
export function fullUsage(f: FlagDescription, hideZero = false): string {
  let s = f.usage;
  const zero = f.defaultText === 'false' || f.defaultText === '0';
  if (f.defaultText !== '' && !(hideZero && zero)) s += ` (default ${f.defaultText})`;
  if (f.deprecated !== undefined) s += ` (DEPRECATED: ${f.deprecated})`;
  return s;
}

/** What {@link parseCommandLine} found. */
export interface ParseOutcome {
  /** Every problem: unknown flags, missing values, rejected values, then each group's validation errors. */
  errors: Error[];
  /** Deprecation and interplay warnings, to print before running. */
  warnings: string[];
  /** True when `-h/--help` was given; help has been written to `out`. */
  helpShown: boolean;
}

/** An option family as `main` drives it (STYLE.md §7). */
export interface OptionGroup<C = unknown> {
  /** Title of the family in help and docs (`Logging`, `Secure serving`). */
  readonly name: string;
  /** Registers the family's flags on `cmd`; call once per command. */
  addFlags(cmd: Command): void;
  /** Every problem with the values, including values rejected while parsing; empty when valid. Pure. */
  validate(): Error[];
  /** Warnings the user should see (deprecated flags used, flags ignored by another flag). Pure. */
  warnings?(): string[];
  /** Copies the validated values into the daemon's configuration. Call only after `validate()` returned nothing. */
  applyTo(config: C): void | Promise<void>;
}

/**
 * Parses `argv` (arguments only, without node and script) into the groups registered on `cmd`, then validates
 * every group. Never exits and never throws for user input: problems come back in {@link ParseOutcome.errors}
 * with pflag's wording (`unknown flag: --x`, `flag needs an argument: --x`). Help goes to `out`.
 */
export function parseCommandLine(
  cmd: Command,
  groups: readonly OptionGroup<never>[],
  argv: readonly string[],
  out: (text: string) => void = (t) => process.stdout.write(t),
): ParseOutcome {
  cmd.exitOverride();
  cmd.configureOutput({ writeOut: out, writeErr: () => {}, outputError: () => {} });
  cmd.configureHelp({ formatHelp: (c) => renderHelp(c) });
  const errors: Error[] = [];
  let helpShown = false;
  try {
    cmd.parse(splitShortEquals(argv), { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError || (err as { code?: unknown }).code !== undefined) {
      const ce = err as CommanderError;
      if (ce.code === 'commander.helpDisplayed' || ce.code === 'commander.help') helpShown = true;
      else errors.push(new FlagError(translateCommanderError(ce), ''));
    } else {
      throw err;
    }
  }
  const warnings: string[] = [];
  if (!helpShown) {
    for (const g of groups) {
      errors.push(...g.validate());
      warnings.push(...(g.warnings?.() ?? []));
    }
  }
  return { errors, warnings, helpShown };
}

function splitShortEquals(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (const a of argv) {
    const m = /^-([A-Za-z])=(.*)$/s.exec(a);
    if (m) out.push(`-${m[1]}`, m[2]!);
    else out.push(a);
  }
  return out;
}

function translateCommanderError(err: CommanderError): string {
  const quoted = /'([^']+)'/.exec(err.message)?.[1] ?? '';
  const flag = quoted.split(/[ ,]/)[0] ?? quoted;
  switch (err.code) {
    case 'commander.unknownOption':
      return flag.startsWith('--')
        ? `unknown flag: ${flag}`
        : `unknown shorthand flag: ${JSON.stringify(flag.slice(1, 2)).replace(/"/g, "'")} in ${flag}`;
    case 'commander.optionMissingArgument':
      return `flag needs an argument: ${flag.startsWith('--') ? flag : `'${flag.slice(1)}' in ${flag}`}`;
    case 'commander.excessArguments':
      return `unexpected arguments: ${err.message.replace(/^error: /, '')}`;
    default:
      return err.message.replace(/^error: /, '');
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Typed flag builders. Each reads the current value (the default set by the group's constructor) for the help text
// and stores parsed values through `set`.

/** Extra settings common to every builder. */
export interface FlagExtras {
  short?: string;
  deprecated?: string;
  /** Overrides the default shown in help (e.g. when the real default is computed later). */
  defaultText?: string;
}

function base(name: string, type: string, usage: string, defaultText: string, x: FlagExtras): Omit<FlagDef, 'set'> {
  return {
    name,
    type,
    usage,
    defaultText: x.defaultText ?? defaultText,
    ...(x.short !== undefined ? { short: x.short } : {}),
    ...(x.deprecated !== undefined ? { deprecated: x.deprecated } : {}),
  };
}

/** A bool flag: `--x`, `--x=true`, `--x=false` (any Go `ParseBool` spelling). */
export function boolFlag(
  name: string,
  usage: string,
  value: boolean,
  set: (v: boolean) => void,
  x: FlagExtras = {},
): FlagDef {
  return { ...base(name, 'bool', usage, String(value), x), noOptDefVal: 'true', set: (raw) => set(parseBool(raw)) };
}

/** A string flag; `validate` may throw to reject a value at parse time. */
export function stringFlag(
  name: string,
  usage: string,
  value: string,
  set: (v: string) => void,
  x: FlagExtras & { validate?: (v: string) => void; type?: string } = {},
): FlagDef {
  return {
    ...base(name, x.type ?? 'string', usage, value === '' ? '' : JSON.stringify(value), x),
    set: (raw) => {
      x.validate?.(raw);
      set(raw);
    },
  };
}

/** An integer flag with an optional inclusive range. */
export function intFlag(
  name: string,
  usage: string,
  value: number | undefined,
  set: (v: number) => void,
  x: FlagExtras & { range?: IntRange; type?: string } = {},
): FlagDef {
  return {
    ...base(name, x.type ?? 'int', usage, value === undefined ? '' : String(value), x),
    set: (raw) => set(parseInteger(raw, x.range)),
  };
}

/** A float flag with an optional inclusive range. */
export function floatFlag(
  name: string,
  usage: string,
  value: number,
  set: (v: number) => void,
  x: FlagExtras & { range?: IntRange } = {},
): FlagDef {
  return { ...base(name, 'float', usage, String(value), x), set: (raw) => set(parseFloat64(raw, x.range)) };
}

/** A Go-duration flag; values are milliseconds. Negative durations are rejected. */
export function durationFlag(
  name: string,
  usage: string,
  value: number | undefined,
  set: (v: number) => void,
  x: FlagExtras = {},
): FlagDef {
  return {
    ...base(name, 'duration', usage, value === undefined ? '' : formatDuration(value), x),
    set: (raw) => set(parseDurationValue(raw)),
  };
}

/** An IP address flag (v4 or v6); with `allowEmpty`, the empty string is accepted too. */
export function ipFlag(
  name: string,
  usage: string,
  value: string,
  set: (v: string) => void,
  x: FlagExtras & { allowEmpty?: boolean } = {},
): FlagDef {
  return { ...base(name, 'ip', usage, value, x), set: (raw) => set(x.allowEmpty && raw === '' ? '' : parseIP(raw)) };
}

/** A CIDR flag. */
export function cidrFlag(
  name: string,
  usage: string,
  value: string,
  set: (v: string) => void,
  x: FlagExtras = {},
): FlagDef {
  return { ...base(name, 'cidr', usage, value, x), set: (raw) => set(parseCIDR(raw)) };
}

/** A `N1-N2` port range flag. */
export function portRangeFlag(
  name: string,
  usage: string,
  value: PortRange,
  set: (v: PortRange) => void,
  x: FlagExtras = {},
): FlagDef {
  return { ...base(name, 'portRange', usage, formatPortRange(value), x), set: (raw) => set(parsePortRange(raw)) };
}

/**
 * A comma-separated, repeatable list (pflag `stringSlice`): the first occurrence replaces the default, later ones
 * append. `item` may validate or transform each element (throw to reject).
 */
export function stringsFlag(
  name: string,
  usage: string,
  value: readonly string[],
  set: (v: string[]) => void,
  x: FlagExtras & { item?: (s: string) => string; type?: string } = {},
): FlagDef {
  let acc: string[] | undefined;
  return {
    ...base(name, x.type ?? 'strings', usage, value.length === 0 ? '' : `[${value.join(',')}]`, x),
    set: (raw) => {
      const items = parseStringList(raw).map((s) => (x.item ? x.item(s) : s));
      acc = [...(acc ?? []), ...items];
      set([...acc]);
    },
  };
}

/**
 * A repeatable flag whose every occurrence is one item (pflag `stringArray`), for values that may contain commas.
 */
export function stringArrayFlag(
  name: string,
  usage: string,
  value: readonly string[],
  set: (v: string[]) => void,
  x: FlagExtras & { item?: (s: string) => string; type?: string } = {},
): FlagDef {
  let acc: string[] | undefined;
  return {
    ...base(name, x.type ?? 'stringArray', usage, value.length === 0 ? '' : `[${value.join(',')}]`, x),
    set: (raw) => {
      acc = [...(acc ?? []), x.item ? x.item(raw) : raw];
      set([...acc]);
    },
  };
}

/** A repeatable `k=v,k2=v2` map flag (Kubernetes `mapStringString`); later occurrences add or override keys. */
export function mapFlag(
  name: string,
  usage: string,
  value: ReadonlyMap<string, string>,
  set: (v: Map<string, string>) => void,
  x: FlagExtras & { type?: string; allowCommasInValues?: boolean; entry?: (k: string, v: string) => void } = {},
): FlagDef {
  let acc: Map<string, string> | undefined;
  const shown = [...value].map(([k, v]) => `${k}=${v}`).join(',');
  return {
    ...base(name, x.type ?? 'mapStringString', usage, shown, x),
    set: (raw) => {
      const parsed = parseKeyValueMap(raw, x.allowCommasInValues);
      for (const [k, v] of parsed) x.entry?.(k, v);
      acc = new Map([...(acc ?? []), ...parsed]);
      set(new Map(acc));
    },
  };
}

/**
 * Base class of the option families: keeps the {@link FlagRecorder}, implements `addFlags`, `validate` (parse errors
 * first, then {@link validateValues}) and `warnings`. Subclasses set defaults in their constructor and list their
 * flags in {@link flagDefs}.
 */
export abstract class OptionGroupBase<C> implements OptionGroup<C> {
  protected readonly recorder: FlagRecorder;

  constructor(readonly name: string) {
    this.recorder = new FlagRecorder(name);
  }

  /** The family's flags, built from the current (default) values. */
  protected abstract flagDefs(): FlagDef[];

  /** Registers every flag of {@link flagDefs} on `cmd`. */
  addFlags(cmd: Command): void {
    for (const def of this.flagDefs()) this.recorder.add(cmd, def);
  }

  /** Parse errors, then the family's own checks. */
  validate(): Error[] {
    return [...this.recorder.errors, ...this.validateValues()];
  }

  /** Semantic checks across values (subclasses override). */
  protected validateValues(): Error[] {
    return [];
  }

  /** Deprecation warnings, then the family's own (subclasses extend with {@link extraWarnings}). */
  warnings(): string[] {
    return [...this.recorder.warnings, ...this.extraWarnings()];
  }

  protected extraWarnings(): string[] {
    return [];
  }

  /** True when the flag `name` appeared on the command line. */
  isSet(name: string): boolean {
    return this.recorder.changed.has(name);
  }

  abstract applyTo(config: C): void | Promise<void>;
}
