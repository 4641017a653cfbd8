// `npm start` (production) refuses the development database, which holds the demo users whose passwords are in
// .data/demo.env, unless ALLOW_DEV_DATABASE=1; it says so in one line and exits 1.
import { execFile } from "node:child_process";
import { describe, expect, it } from "vitest";

function start(extra: Record<string, string>): Promise<{ code: number; stderr: string }> {
  const env: NodeJS.ProcessEnv = { NODE_ENV: "production", PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", AUTH_SECRET: "s".repeat(32), PORT: "3399", ...extra };
  return new Promise((done) => {
    execFile(process.execPath, ["--import", "tsx", "scripts/serve.ts", "start"], { env, timeout: 60_000 }, (error, _stdout, stderr) =>
      done({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stderr }),
    );
  });
}

describe("npm start and the development database", () => {
  it("refuses to serve .data/dev.db in production, DATABASE_URL unset or naming it", async () => {
    for (const extra of [{}, { DATABASE_URL: "file:./.data/dev.db" }] as Record<string, string>[]) {
      const result = await start(extra);
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toMatch(/^Refusing to serve the development database file:\.\/\.data\/dev\.db in production: .* ALLOW_DEV_DATABASE=1 to serve it anyway\.$/);
    }
  });
});
