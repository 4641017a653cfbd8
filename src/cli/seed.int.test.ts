// The demo file of `npm run dev` (docs/rules/operations.md#the-demo-file): where it is kept for a database, and
// that a later start prints, and writes into the file, the address it runs on.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEMO_FILE, demoCredentials, demoFileFor } from "@/cli/seed";
import { env, parseEnv, setEnvForTests } from "@/env";

let restore: Partial<ReturnType<typeof env>> | null = null;
afterEach(() => {
  if (restore) setEnvForTests(restore);
  restore = null;
});

const configOf = (DATABASE_URL?: string) => parseEnv({ NODE_ENV: "test", AUTH_SECRET: "x".repeat(32), ...(DATABASE_URL ? { DATABASE_URL } : {}) });

describe("the demo file", () => {
  it("is .data/demo.env for the development database and PostgreSQL, and beside any other SQLite file", () => {
    expect(demoFileFor(configOf())).toBe(DEMO_FILE);
    expect(demoFileFor(configOf("file:./.data/dev.db"))).toBe(DEMO_FILE);
    expect(demoFileFor(configOf("postgresql://u:p@db/x"))).toBe(DEMO_FILE);
    expect(demoFileFor(configOf("file:/tmp/elsewhere/run-7.db"))).toBe("/tmp/elsewhere/run-7.demo.env");
    expect(demoFileFor(configOf("file:./.test-scratch/dev-1.db"))).toBe(resolve(".test-scratch/dev-1.demo.env"));
  });

  it("is printed on a later start for the address this start runs on, and its DEMO_URL follows", () => {
    const dir = mkdtempSync(join(process.env.TEST_SCRATCH_DIR!, "demo-"));
    const file = join(dir, "demo.env");
    const names = ["ALICE_PASSWORD", "BOB_PASSWORD", "CAROL_PASSWORD", "CODE_CLIENT_ID", "CODE_CLIENT_SECRET", "IMPLICIT_CLIENT_ID", "IMPLICIT_CLIENT_SECRET", "PASSWORD_CLIENT_ID", "PASSWORD_CLIENT_SECRET", "FIRST_PARTY_CLIENT_ID", "FIRST_PARTY_CLIENT_SECRET", "BOB_CLIENT_ID", "BOB_CLIENT_SECRET", "SERVICE_CLIENT_ID", "SERVICE_CLIENT_SECRET", "DEVICE_CLIENT_ID"];
    // A file of an earlier seed, without DEMO_URL.
    writeFileSync(file, [`DEMO_DATABASE='${env().databaseUrl}'`, ...names.map((name) => `${name}='${name.toLowerCase()}'`), ""].join("\n"));
    restore = setEnvForTests({ appUrl: "http://localhost:3999" });
    const printed = demoCredentials(file)!;
    expect(printed).toContain("for http://localhost:3999");
    expect(printed).toContain("--client-id=code_client_id --client-secret=code_client_secret --server=http://localhost:3999");
    expect(printed).toContain("curl -s http://localhost:3999/api/connect/oauth2/token/");
    expect(readFileSync(file, "utf8")).toMatch(/^DEMO_URL='http:\/\/localhost:3999'$/m);
    expect(readFileSync(file, "utf8")).toMatch(/^ALICE_PASSWORD='alice_password'$/m);
    // The example client's own default needs no --server.
    setEnvForTests({ appUrl: "http://localhost:3000" });
    expect(demoCredentials(file)).toMatch(/--client-secret=code_client_secret\n/);
    expect(readFileSync(file, "utf8")).toMatch(/^DEMO_URL='http:\/\/localhost:3000'$/m);
  });
});
