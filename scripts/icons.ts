// Renders public/icon.svg into the PNG icons and favicon.ico that browsers and home screens ask for
// (public/: favicon.ico 16+32, apple-touch-icon.png 180, icon-192.png, icon-512.png and a maskable 512 with
// a safe margin). Run after changing the mark: `npx tsx scripts/icons.ts`. Uses Debian's Chromium, like e2e.
import { chromium } from "@playwright/test";
import { readFileSync, writeFileSync } from "node:fs";

const svg = readFileSync("public/icon.svg", "utf8");
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
const page = await browser.newPage();

async function render(size: number, options: { padding?: number; background?: string } = {}): Promise<Buffer> {
  const padding = options.padding ?? 0;
  await page.setViewportSize({ width: size, height: size });
  const inner = size - 2 * padding;
  await page.setContent(
    `<html><body style="margin:0;background:${options.background ?? "transparent"}">` +
      `<div style="padding:${padding}px;width:${inner}px;height:${inner}px">${svg.replace("<svg ", `<svg width="${inner}" height="${inner}" `)}</div></body></html>`,
  );
  return page.screenshot({ omitBackground: !options.background, clip: { x: 0, y: 0, width: size, height: size } });
}

/** An ICO file holding PNG images (supported by every browser since 2007). */
function ico(images: { size: number; png: Buffer }[]): Buffer {
  const header = Buffer.alloc(6 + 16 * images.length);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2);
  header.writeUInt16LE(images.length, 4);
  let offset = header.length;
  images.forEach(({ size, png }, i) => {
    const entry = 6 + 16 * i;
    header.writeUInt8(size >= 256 ? 0 : size, entry);
    header.writeUInt8(size >= 256 ? 0 : size, entry + 1);
    header.writeUInt16LE(1, entry + 4);
    header.writeUInt16LE(32, entry + 6);
    header.writeUInt32LE(png.length, entry + 8);
    header.writeUInt32LE(offset, entry + 12);
    offset += png.length;
  });
  return Buffer.concat([header, ...images.map((image) => image.png)]);
}

writeFileSync("public/favicon.ico", ico([{ size: 16, png: await render(16) }, { size: 32, png: await render(32) }]));
writeFileSync("public/apple-touch-icon.png", await render(180, { padding: 14, background: "#1d4ed8" }));
writeFileSync("public/icon-192.png", await render(192));
writeFileSync("public/icon-512.png", await render(512));
writeFileSync("public/icon-maskable-512.png", await render(512, { padding: 64, background: "#1d4ed8" }));
await browser.close();
console.log("icons written to public/");
