import Link from "next/link";
import type { ComponentProps, ReactNode } from "react";

/** The id of every page's <main>: the target of the skip link. */
export const MAIN_ID = "main";

export function Page({ title, children, narrow = false, lead }: { title: string; children: ReactNode; narrow?: boolean; lead?: ReactNode }) {
  return (
    <main id={MAIN_ID} tabIndex={-1} className={`mx-auto w-full ${narrow ? "max-w-md" : "max-w-3xl"} px-4 py-8 outline-none sm:py-12`}>
      <h1 className="text-2xl font-semibold tracking-tight text-balance sm:text-3xl">{title}</h1>
      {lead ? <div className="mt-3 text-slate-700 dark:text-slate-300">{lead}</div> : null}
      <div className="mt-6 space-y-6">{children}</div>
    </main>
  );
}

export function Card({ children, className = "", ...props }: { children: ReactNode; className?: string } & Omit<ComponentProps<"section">, "className">) {
  return (
    <section className={`rounded-xl border border-slate-200 bg-white p-5 shadow-sm dark:border-slate-800 dark:bg-slate-900 ${className}`} {...props}>
      {children}
    </section>
  );
}

const controlStyles =
  "block w-full rounded-lg border bg-white px-3 py-2 text-base shadow-sm focus:border-blue-600 focus:outline-none focus:ring-2 focus:ring-blue-600/30 dark:bg-slate-950 aria-[invalid=true]:border-red-600 aria-[invalid=true]:ring-red-600/30 border-slate-300 dark:border-slate-700";

type FieldFrameProps = { id: string; label: string; hint?: ReactNode; error?: string | null; children: ReactNode };

/** A label, the control, a hint and the field's error message, wired together for assistive technology. */
function FieldFrame({ id, label, hint, error, children }: FieldFrameProps) {
  return (
    <div className="space-y-1">
      <label htmlFor={id} className="block text-sm font-medium">
        {label}
      </label>
      {children}
      {hint ? (
        <p id={`${id}-hint`} className="text-xs text-slate-600 dark:text-slate-400">
          {hint}
        </p>
      ) : null}
      {error ? (
        <p id={`${id}-error`} className="text-sm font-medium text-red-700 dark:text-red-400">
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** aria-invalid and aria-describedby for a control with an optional hint and error. */
function described(id: string, hint: unknown, error: string | null | undefined) {
  const ids = [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(" ");
  return { "aria-invalid": error ? true : undefined, "aria-describedby": ids || undefined };
}

type FieldProps = { label: string; name: string; hint?: ReactNode; error?: string | null } & ComponentProps<"input">;

export function Field({ label, name, hint, error, className, ...props }: FieldProps) {
  const id = props.id ?? name;
  return (
    <FieldFrame id={id} label={label} hint={hint} error={error}>
      <input id={id} name={name} className={`${controlStyles} ${className ?? ""}`} {...described(id, hint, error)} {...props} />
    </FieldFrame>
  );
}

type SelectFieldProps = { label: string; name: string; hint?: ReactNode; error?: string | null } & ComponentProps<"select">;

export function SelectField({ label, name, hint, error, children, ...props }: SelectFieldProps) {
  const id = props.id ?? name;
  return (
    <FieldFrame id={id} label={label} hint={hint} error={error}>
      <select id={id} name={name} className={controlStyles} {...described(id, hint, error)} {...props}>
        {children}
      </select>
    </FieldFrame>
  );
}

type TextAreaFieldProps = { label: string; name: string; hint?: ReactNode; error?: string | null } & ComponentProps<"textarea">;

export function TextAreaField({ label, name, hint, error, className, ...props }: TextAreaFieldProps) {
  const id = props.id ?? name;
  return (
    <FieldFrame id={id} label={label} hint={hint} error={error}>
      <textarea id={id} name={name} className={`${controlStyles} ${className ?? ""}`} {...described(id, hint, error)} {...props} />
    </FieldFrame>
  );
}

const buttonStyles = {
  primary: "bg-blue-700 text-white hover:bg-blue-800 focus-visible:outline-blue-700",
  secondary:
    "border border-slate-300 bg-white text-slate-900 hover:bg-slate-100 focus-visible:outline-blue-700 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-100 dark:hover:bg-slate-800",
  danger: "bg-red-700 text-white hover:bg-red-800 focus-visible:outline-red-700",
} as const;

export type ButtonVariant = keyof typeof buttonStyles;

export function Button({ variant = "primary", className = "", ...props }: { variant?: ButtonVariant } & ComponentProps<"button">) {
  return (
    <button
      className={`inline-flex min-h-10 items-center justify-center rounded-lg px-4 py-2 text-sm font-semibold focus-visible:outline-2 focus-visible:outline-offset-2 disabled:opacity-60 ${buttonStyles[variant]} ${className}`}
      {...props}
    />
  );
}

export const alertStyles = {
  error: "border-red-300 bg-red-50 text-red-900 dark:border-red-900 dark:bg-red-950 dark:text-red-100",
  info: "border-blue-300 bg-blue-50 text-blue-900 dark:border-blue-900 dark:bg-blue-950 dark:text-blue-100",
  success: "border-green-300 bg-green-50 text-green-900 dark:border-green-900 dark:bg-green-950 dark:text-green-100",
} as const;

export function Alert({ kind = "error", children }: { kind?: keyof typeof alertStyles; children: ReactNode }) {
  return (
    <div role={kind === "error" ? "alert" : "status"} className={`rounded-lg border px-4 py-3 text-sm ${alertStyles[kind]}`}>
      {children}
    </div>
  );
}

export function TextLink({ className = "", ...props }: ComponentProps<typeof Link>) {
  return <Link className={`font-medium text-blue-700 underline underline-offset-2 hover:no-underline dark:text-blue-400 ${className}`} {...props} />;
}

/** Facts for developers (an OAuth error code, a client_id), set apart from the message for people. */
export function DeveloperDetails({ facts }: { facts: [string, string][] }) {
  if (facts.length === 0) return null;
  return (
    <section aria-label="For developers" className="rounded-lg border border-slate-200 bg-slate-100 px-4 py-3 text-sm dark:border-slate-800 dark:bg-slate-900">
      <h2 className="font-semibold">For developers</h2>
      <dl className="mt-1 grid grid-cols-[auto_1fr] gap-x-3 gap-y-1">
        {facts.map(([label, value]) => (
          <div key={label} className="contents">
            <dt>{label}</dt>
            <dd className="font-mono break-all">{value}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
