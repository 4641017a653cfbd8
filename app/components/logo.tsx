// The service's mark (also public/icon.svg): a bundle, three stacked sheets on a blue tile. Decorative.
export function Logo({ className = "h-6 w-6" }: { className?: string }) {
  return (
    <svg viewBox="0 0 32 32" className={className} aria-hidden="true" focusable="false">
      <rect width="32" height="32" rx="7" fill="#1d4ed8" />
      <path d="M16 6.5 26 11.5 16 16.5 6 11.5Z" fill="#fff" />
      <path d="M8.2 15.1 16 19 23.8 15.1 26 16.2 16 21.2 6 16.2Z" fill="#bfdbfe" />
      <path d="M8.2 19.8 16 23.7 23.8 19.8 26 20.9 16 25.9 6 20.9Z" fill="#93c5fd" />
    </svg>
  );
}
