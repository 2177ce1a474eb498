/** The command line of `platform-scheduler`. */
export async function main(_argv: string[]): Promise<number> {
  process.stderr.write('platform-scheduler: not built yet\n');
  return 1;
}
