/** The command line of `platform-controller-manager`. */
export async function main(_argv: string[]): Promise<number> {
  process.stderr.write('platform-controller-manager: not built yet\n');
  return 1;
}
