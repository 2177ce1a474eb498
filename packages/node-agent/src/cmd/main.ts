/** The command line of `platform-node-agent`. */
export async function main(_argv: string[]): Promise<number> {
  process.stderr.write('platform-node-agent: not built yet\n');
  return 1;
}
