"use client";

// The site header. One row on every screen: on a phone the links fold into a "Menu" button, so the header
// never wraps into uneven rows. The current page's link is marked (aria-current="page"). Inside the consent
// flow there is no navigation at all: only the service's name and the account, so that nothing between the
// person and Approve/Deny leads away from the decision.
import Link from "next/link";
import { usePathname } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import { useHydrated } from "./hydrated";
import { SERVICE_NAME } from "@/site";
import { Logo } from "./logo";
import { SignOutButton } from "./sign-out-button";

const SIGNED_IN = [
  { href: "/settings/apps", label: "Apps" },
  { href: "/settings/sharing", label: "Sharing" },
  { href: "/settings/clients", label: "Clients" },
  { href: "/settings/security", label: "Security" },
  { href: "/docs", label: "Docs" },
];
const SIGNED_OUT = [
  { href: "/docs", label: "Docs" },
  { href: "/login", label: "Sign in" },
  { href: "/signup", label: "Create account" },
];

/** Pages inside an authorization flow: a minimal header. */
const FLOW_PAGES = ["/consent"];

const isCurrent = (pathname: string, href: string) => pathname === href || pathname.startsWith(`${href}/`);

export function HeaderNav({ email }: { email: string | null }) {
  const pathname = usePathname() ?? "/";
  // The menu is open for the page it was opened on; navigating closes it.
  const [openOn, setOpenOn] = useState<string | null>(null);
  const open = openOn === pathname;
  const hydrated = useHydrated();
  const menuButton = useRef<HTMLButtonElement>(null);
  // Escape closes the open menu and puts the focus back on its button
  // (docs/rules/pages.md#keyboard-and-assistive-technology).
  useEffect(() => {
    if (!open) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== "Escape") return;
      setOpenOn(null);
      menuButton.current?.focus();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [open]);

  if (FLOW_PAGES.some((page) => isCurrent(pathname, page))) {
    return (
      <header className="border-b border-slate-200 bg-white dark:border-slate-800 dark:bg-slate-900">
        <div className="mx-auto flex min-h-14 max-w-3xl items-center gap-3 px-4 text-sm">
          <span className="flex shrink-0 items-center gap-2 font-semibold whitespace-nowrap">
            <Logo />
            {SERVICE_NAME}
          </span>
          {email ? (
            <span className="ml-auto min-w-0 truncate text-slate-600 dark:text-slate-400" title={email}>
              {email}
            </span>
          ) : null}
        </div>
      </header>
    );
  }

  const links = email ? SIGNED_IN : SIGNED_OUT;
  return (
    <header className="border-b border-slate-200 bg-white dark:border-slate-800 dark:bg-slate-900">
      <div className="mx-auto flex min-h-14 max-w-3xl flex-wrap items-center gap-x-6 px-4 text-sm">
        <Link href="/" className="flex shrink-0 items-center gap-2 py-3 font-semibold whitespace-nowrap" aria-current={pathname === "/" ? "page" : undefined}>
          <Logo />
          {SERVICE_NAME}
        </Link>
        <button
          ref={menuButton}
          type="button"
          className="ml-auto inline-flex min-h-10 items-center gap-2 rounded-lg border border-slate-300 px-3 font-semibold md:hidden dark:border-slate-600"
          aria-expanded={open}
          aria-controls="site-menu"
          disabled={!hydrated}
          onClick={() => setOpenOn(open ? null : pathname)}
        >
          <svg viewBox="0 0 20 20" className="h-4 w-4" aria-hidden="true" focusable="false">
            <path d={open ? "M5 5l10 10M15 5 5 15" : "M3 5h14M3 10h14M3 15h14"} stroke="currentColor" strokeWidth="2" strokeLinecap="round" fill="none" />
          </svg>
          Menu
        </button>
        <nav id="site-menu" aria-label="Main" className={`${open ? "flex" : "hidden"} w-full flex-col gap-1 border-t border-slate-200 py-2 md:flex md:w-auto md:flex-1 md:flex-row md:items-center md:gap-6 md:border-0 md:py-0 dark:border-slate-800`}>
          <ul className="flex flex-col gap-1 md:flex-row md:gap-5">
            {links.map((link) => {
              const current = isCurrent(pathname, link.href);
              return (
                <li key={link.href}>
                  <Link
                    href={link.href}
                    aria-current={current ? "page" : undefined}
                    className={`block rounded-md px-2 py-2 md:px-0 md:py-4 ${current ? "font-semibold text-blue-800 underline decoration-2 underline-offset-8 md:no-underline md:shadow-[inset_0_-3px_0_0_currentColor] dark:text-blue-300" : "hover:underline"}`}
                  >
                    {link.label}
                  </Link>
                </li>
              );
            })}
          </ul>
          {email ? (
            <div className="flex flex-wrap items-center gap-x-4 gap-y-1 border-t border-slate-200 px-2 pt-2 md:ml-auto md:border-0 md:px-0 md:pt-0 dark:border-slate-800">
              <span className="max-w-full truncate text-slate-600 md:max-w-48 dark:text-slate-400" title={email}>
                {email}
              </span>
              <SignOutButton />
            </div>
          ) : null}
        </nav>
      </div>
    </header>
  );
}
