"use client";

// A mail's HTML, shown whole: the frame grows to the height of the mail (no inner scroll bar, nothing cut off)
// and follows the width of the page. The frame runs no scripts (sandbox without allow-scripts); it keeps its
// origin only so that this page can measure it.
import { useEffect, useRef, useState } from "react";

export function MailFrame({ html, title }: { html: string; title: string }) {
  const frame = useRef<HTMLIFrameElement>(null);
  const [height, setHeight] = useState(480);
  useEffect(() => {
    const element = frame.current;
    if (!element) return;
    const measure = () => {
      const body = element.contentDocument?.body;
      if (!body) return;
      const style = element.contentWindow?.getComputedStyle(body);
      const margins = style ? parseFloat(style.marginTop) + parseFloat(style.marginBottom) : 0;
      setHeight(Math.ceil(Math.max(body.scrollHeight, body.offsetHeight) + margins) + 2);
    };
    element.addEventListener("load", measure);
    if (element.contentDocument?.readyState === "complete") measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => {
      element.removeEventListener("load", measure);
      observer.disconnect();
    };
  }, [html]);
  return (
    <iframe
      ref={frame}
      title={title}
      sandbox="allow-same-origin allow-popups allow-popups-to-escape-sandbox"
      srcDoc={html}
      style={{ height }}
      className="block w-full rounded border border-slate-200 bg-white dark:border-slate-700"
    />
  );
}
