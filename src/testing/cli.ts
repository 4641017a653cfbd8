// Runs the real admin CLI as a child process with the test environment (and so the test database).
import { spawn } from "node:child_process";

export type CliRun = { code: number | null; stdout: string; stderr: string };

export function runCli(...args: string[]): Promise<CliRun> {
  return runCliWith({}, ...args);
}

/** The CLI with some variables changed (another database, for instance). */
export function runCliWith(env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn("node_modules/.bin/tsx", ["src/cli/main.ts", ...args], { env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
