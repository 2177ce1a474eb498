/**
 * The start of every daemon's `main`: build the command from its option families, parse the command line, and
 * either run or exit — help and `--version` exit 0; any problem prints every error (`Error: ...`) and exits 1;
 * warnings (deprecated flags, ignored flags, insecure ciphers) are printed and the daemon runs.
 *
 * ```ts
 * const groups = [version, logging, secureServing, ...];
 * const cmd = buildCommand('platform-scheduler', 'The platform scheduler ...', groups);
 * const outcome = parseOrExit(cmd, groups, process.argv.slice(2), version);
 * if (outcome.exitCode !== undefined) process.exit(outcome.exitCode);
 * ```
 */
import { Command } from 'commander';

import { type OptionGroup, parseCommandLine } from './flags';
import { isFlagError } from './parsers';
import { type VersionOptions } from './version-options';

/** Where `parseOrExit` writes. */
export interface CommandIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const PROCESS_IO: CommandIO = {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
};

/** A commander `Command` with every group's flags registered (in order; the order of help and docs). */
export function buildCommand(name: string, description: string, groups: readonly OptionGroup<never>[]): Command {
  const cmd = new Command(name).description(description);
  for (const g of groups) g.addFlags(cmd);
  return cmd;
}

/** What `main` does next: run (exitCode undefined), or exit with the code. */
export interface CommandOutcome {
  exitCode?: number;
  /** Every error, as printed (empty when running). */
  errors: Error[];
}

/**
 * Parses and validates `argv`. Prints help (exit 0), the version when asked for and the command line itself is
 * well-formed (exit 0, before semantic validation, as Kubernetes' `verflag`), or every error with a hint
 * (exit 1). Does not call `process.exit` itself.
 */
export function parseOrExit(
  cmd: Command,
  groups: readonly OptionGroup<never>[],
  argv: readonly string[],
  version?: VersionOptions,
  io: CommandIO = PROCESS_IO,
): CommandOutcome {
  const r = parseCommandLine(cmd, groups, argv, io.stdout);
  if (r.helpShown) return { exitCode: 0, errors: [] };
  const commandLineErrors = r.errors.filter(isFlagError);
  if (version && commandLineErrors.length === 0 && version.printIfRequested(io.stdout))
    return { exitCode: 0, errors: [] };
  for (const w of r.warnings) io.stderr(`W ${w}\n`);
  if (r.errors.length > 0) {
    for (const e of r.errors) io.stderr(`Error: ${e.message}\n`);
    io.stderr(`Run '${cmd.name()} --help' for usage.\n`);
    return { exitCode: 1, errors: r.errors };
  }
  return { errors: [] };
}
