// Import rules, checked by `npm run lint` (docs/design.md#layers). Layers point one way:
//   top     app/, src/server/ (the HTTP server), src/cli/ (the admin CLI and the development seed), scripts/,
//           e2e/, instrumentation.ts, proxy.ts, and src/testing/ (the tests' harness)
//   middle  the domain folders of src/ (oauth, oidc, permission-requests, users, email, limits, ...)
//   bottom  src/http/ (requests and responses) over src/db/ (the database) over src/observability/ (logs and
//           metrics), and beside them src/env.ts, src/clock.ts, src/secrets.ts, src/site.ts, src/format/
// A module may import its own layer and the layers below it, never one above; no import goes round a circle.
const TEST = "\\.test\\.tsx?$";
const BOTTOM = "^src/(http|db|observability|format)/|^src/(env|clock|secrets|site)\\.ts$";
const TOP = "^(app|scripts|e2e)/|^src/(server|cli|testing)/|^(instrumentation|proxy)\\.ts$";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "An import circle: modules that cannot be read, tested or loaded one without the other.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "domain-not-to-top",
      comment: "A domain folder uses the layers below it and other domain folders, never the server, the CLI, the tests' harness or app/.",
      severity: "error",
      from: { path: "^src/", pathNot: [TOP, BOTTOM, TEST, "^src/generated/"] },
      to: { path: TOP },
    },
    {
      name: "bottom-not-up",
      comment: "The bottom layers (requests and responses, the database, logs and metrics, env and clock) use nothing above them.",
      severity: "error",
      from: { path: BOTTOM, pathNot: TEST },
      to: { path: "^(src|app)/", pathNot: [BOTTOM, "^src/generated/"] },
    },
    {
      name: "bottom-in-order",
      comment: "Within the bottom layer: http uses db and observability, db uses observability, observability uses only env and clock.",
      severity: "error",
      from: { path: "^src/(db|observability)/", pathNot: TEST },
      to: { path: "^src/http/" },
    },
    {
      name: "observability-is-the-ground",
      comment: "Everything logs and counts; logs and metrics use nothing but the environment and the clock (a metric that needs the outbox is given its reader by the outbox).",
      severity: "error",
      from: { path: "^src/observability/", pathNot: TEST },
      to: { path: "^src/", pathNot: ["^src/observability/", "^src/(env|clock)\\.ts$"] },
    },
    {
      name: "production-not-to-tests",
      comment: "Code that serves requests never loads a test or the tests' harness.",
      severity: "error",
      from: { path: "^(src|app)/", pathNot: [TEST, "^src/testing/", "^src/generated/"] },
      to: { path: [TEST, "^src/testing/"] },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^src/generated/|node_modules" },
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
  },
};
