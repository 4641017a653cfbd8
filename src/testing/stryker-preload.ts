// Under Stryker only (it sets STRYKER_MUTATOR_WORKER in its test runners): loads every module of the mutated
// folders before a test file's tests run. Route modules are otherwise imported by the dispatcher inside the
// first test that calls them, so their module-level code (constants, regexes, schemas) would count as covered
// by that one test, and its mutants would be tested by that test alone, with the mutant not yet active when
// the module loaded: false survivors. Loaded here, that code is plainly "static" and Stryker treats it so
// (stryker.config.mjs: ignoreStatic). Nothing happens in a normal test run.
import { readdirSync } from "node:fs";
import { resolve } from "node:path";

const MUTATED = ["oauth", "permission-requests", "http", "users", "email"];

if (process.env.STRYKER_MUTATOR_WORKER !== undefined) {
  for (const folder of MUTATED) {
    const files = (readdirSync(resolve("src", folder), { recursive: true }) as string[]).filter(
      (file) => file.endsWith(".ts") && !file.endsWith(".test.ts"),
    );
    for (const file of files) await import(/* @vite-ignore */ resolve("src", folder, file));
  }
}
