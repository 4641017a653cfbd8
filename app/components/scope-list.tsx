import { SCOPE_DESCRIPTIONS, type Scope } from "@/oauth/scope";

/** Scopes that let an app change things; the rest only read or identify. */
const WRITE_SCOPES: readonly Scope[] = ["readwrite"];

/**
 * What an app may do, in words, one line per scope. Access that changes things is set apart from access that
 * only reads (a tinted row and a "Can change" mark, in words, not colour alone).
 */
export function ScopeList({ scopes, label }: { scopes: readonly Scope[]; label?: string }) {
  return (
    <ul className="space-y-2 text-sm" aria-label={label}>
      {scopes.map((scope) => {
        const write = WRITE_SCOPES.includes(scope);
        return (
          <li
            key={scope}
            className={`flex items-start gap-3 rounded-lg border px-3 py-2 ${write ? "border-amber-400 bg-amber-50 dark:border-amber-600 dark:bg-amber-950" : "border-slate-200 dark:border-slate-700"}`}
          >
            <span
              className={`mt-0.5 min-w-22 shrink-0 rounded px-1.5 py-0.5 text-center text-xs font-semibold ${write ? "bg-amber-200 text-amber-950 dark:bg-amber-700 dark:text-amber-50" : "bg-slate-100 text-slate-800 dark:bg-slate-800 dark:text-slate-200"}`}
            >
              {write ? "Can change" : "Can read"}
            </span>
            <span>{SCOPE_DESCRIPTIONS[scope]}</span>
          </li>
        );
      })}
    </ul>
  );
}
