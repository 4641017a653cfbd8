// Under Stryker only (it sets STRYKER_MUTATOR_WORKER in its test runners): loads every module of the mutated
// folders before a test file's tests run. Route modules are otherwise imported by the dispatcher inside the
// first test that calls them, so their module-level code (constants, regexes, schemas) would count as covered
// by that one test, and its mutants would be tested by that test alone, with the mutant not yet active when
// the module loaded: false survivors. Loaded here, that code is plainly "static" and Stryker treats it so
// (mutation/stryker.config.mjs: ignoreStatic). Only the initial run, which measures coverage, needs this: a mutant
// run activates its (non-static) mutant at run time, whenever the module loaded, so it skips the preload and
// each test file loads only what it uses (seconds per file on 2 cores). Nothing happens in a normal test run.
import { readdirSync } from "node:fs";
import { resolve } from "node:path";
import { inject } from "vitest";

/** The mutated folders: scripts/mutation.ts FOLDERS and mutation/stryker.config.mjs name the same. */
const MUTATED = ["oauth", "token-endpoint", "consent", "resource", "permission-requests", "http", "users", "email", "audit", "maintenance", "dpop", "device", "registration", "accounts", "par", "oidc", "db"];
// A one-folder run (mutation/stryker.folder.config.mjs) of a folder not in the list yet preloads it too, so that
// its module-level code is static there as well before the folder joins the list.
const folderRun = process.env.MUTATE_FOLDER;
if (folderRun && !MUTATED.includes(folderRun)) MUTATED.push(folderRun);

// Stryker's vitest runner provides "mode" ("dry-run" or "mutant") to its setup file; not in vitest's types.
const strykerMode = () => (inject as (key: string) => unknown)("mode");

if (process.env.STRYKER_MUTATOR_WORKER !== undefined && strykerMode() !== "mutant") {
  for (const folder of MUTATED) {
    const files = (readdirSync(resolve("src", folder), { recursive: true }) as string[]).filter(
      (file) => file.endsWith(".ts") && !file.endsWith(".test.ts"),
    );
    for (const file of files) await import(/* @vite-ignore */ resolve("src", folder, file));
  }
}
