// Starts server instances as separate processes (src/testing/instance-main.ts), on the test database unless
// told otherwise, for tests of rules that must hold across instances (the failed-attempt limit) and of what
// an instance does by itself (the outbox sweep, its log lines).
import { spawn } from "node:child_process";
import { afterAll, beforeAll } from "vitest";

export type Instance = {
  url: string;
  /** Everything the process printed so far, standard output and standard error together. */
  output: () => string;
  /** Resolves when `pattern` has been printed (or rejects when the process ends first). */
  printed: (pattern: RegExp) => Promise<string>;
  stop: () => Promise<void>;
};

export type InstanceOptions = {
  env?: Record<string, string>;
  instrumentation?: boolean;
  /** Migrate and seed the instance's database first (it must be empty), writing the demo credentials here. */
  seed?: string;
};

export async function startInstance(options: InstanceOptions = {}): Promise<Instance> {
  const args = [
    "src/testing/instance-main.ts",
    ...(options.instrumentation ? ["--instrumentation"] : []),
    ...(options.seed ? ["--seed", options.seed] : []),
  ];
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env, ...(options.instrumentation ? { NEXT_RUNTIME: "nodejs" } : {}) };
  const child = spawn("node_modules/.bin/tsx", args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  let exited = false;
  const waiters = new Set<() => void>();
  const changed = () => waiters.forEach((wake) => wake());
  child.stdout.on("data", (chunk) => ((output += chunk), changed()));
  child.stderr.on("data", (chunk) => ((output += chunk), changed()));
  const exit = new Promise<void>((resolve) => child.on("exit", () => ((exited = true), changed(), resolve())));

  const printed = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(output);
        if (match) return waiters.delete(check), resolve(match[0]);
        if (exited) return waiters.delete(check), reject(new Error(`the instance ended before printing ${pattern}:\n${output}`));
      };
      waiters.add(check);
      check();
    });

  const url = (await printed(/^listening (\S+)$/m)).split(" ")[1]!;
  return {
    url,
    output: () => output,
    printed,
    async stop() {
      if (exited) return;
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exit;
      clearTimeout(killer);
    },
  };
}

/**
 * `count` instances started before the tests of the enclosing file or describe block and stopped after them:
 * the array fills once they are up.
 */
export function startedInstances(count: number, options: InstanceOptions = {}): Instance[] {
  const instances: Instance[] = [];
  beforeAll(async () => {
    instances.push(...(await Promise.all(Array.from({ length: count }, () => startInstance(options)))));
  }, 120_000);
  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
  });
  return instances;
}
