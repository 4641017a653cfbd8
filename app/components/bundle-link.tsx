import Link from "next/link";

/**
 * A bundle's name as a link to its page, /bundles/<id> (docs/rules/pages.md#bundle-page), never to its JSON.
 * Only where the reader may see the bundle: anyone else would get the 404 page.
 */
export function BundleLink({ id, name, className = "" }: { id: number; name: string; className?: string }) {
  return (
    <Link href={`/bundles/${id}`} className={`text-blue-700 underline underline-offset-2 hover:no-underline dark:text-blue-400 ${className}`}>
      {name}
    </Link>
  );
}
