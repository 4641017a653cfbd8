// Reads what the service's logger writes while `fn` runs: the real JSON lines on the process's standard output
// and standard error (src/observability/log.ts), for tests of what is logged. The streams are restored afterwards.
export async function captureLog<T>(fn: (linesSoFar: () => Record<string, unknown>[]) => Promise<T>): Promise<{ result: T; lines: Record<string, unknown>[] }> {
  const written: string[] = [];
  const parse = () =>
    written
      .join("")
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  const collect = ((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  process.stdout.write = collect;
  process.stderr.write = collect;
  try {
    const result = await fn(parse);
    return { result, lines: parse() };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}
