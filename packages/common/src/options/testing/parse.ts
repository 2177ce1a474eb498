/** Test helper: registers `groups` on a fresh command and parses `argv` as a daemon would. */
import { Command } from 'commander';

import { type OptionGroup, type ParseOutcome, parseCommandLine } from '../flags';

/** The parse outcome, with error messages and the help text written. */
export function parseForTest(
  groups: readonly OptionGroup<never>[],
  argv: string[],
): ParseOutcome & { messages: string[]; help: string } {
  const cmd = new Command('platform-test');
  for (const g of groups) g.addFlags(cmd);
  let help = '';
  const r = parseCommandLine(cmd, groups, argv, (t) => (help += t));
  return { ...r, messages: r.errors.map((e) => e.message), help };
}
