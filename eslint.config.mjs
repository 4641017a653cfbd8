import nextVitals from "eslint-config-next/core-web-vitals";
import nextTs from "eslint-config-next/typescript";

const config = [
  ...nextVitals,
  ...nextTs,
  {
    ignores: ["node_modules/**", ".next/**", "dist/**", "src/generated/**", ".data/**", ".test-scratch/**", "next-env.d.ts", "test-results/**", "playwright-report/**", "e2e-screenshots/**", "bench-results/**", ".stryker-tmp*/**", "reports/**"],
  },
  {
    rules: {
      "@typescript-eslint/consistent-type-definitions": ["error", "type"],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-restricted-properties": [
        "error",
        { object: "Date", property: "now", message: "Use now() from src/clock.ts so that tests can set the time." },
      ],
    },
  },
  {
    files: ["scripts/**", "e2e/**", "*.config.ts", "**/*.test.ts", "src/clock.ts", "src/observability/log.ts"],
    rules: { "no-restricted-properties": "off" },
  },
];

export default config;
