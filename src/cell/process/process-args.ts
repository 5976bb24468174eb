/** The number after `name` in this process's arguments (`--nice 5`), or `fallback` when `name` is not there. For the processes Anvil forks itself (cells, the deploy worker), whose arguments it writes. */
export function numberArg(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
}
