export default function Home() {
  return (
    <main className="mx-auto max-w-2xl px-4 py-12">
      <h1 className="text-3xl font-semibold">Bundle permissions</h1>
      <p className="mt-4 text-slate-700 dark:text-slate-300">
        An OAuth 2 authorization server: third-party apps sign you in here, and people can ask you to let
        someone into one of your bundles.
      </p>
    </main>
  );
}
