// What every page of the pages specs is checked for, wherever a flow arrives at it (docs/testing.md): no
// serious or critical accessibility violation (axe-core, WCAG 2.2 A/AA and best practice), in light and dark
// mode; every icon and the web manifest it names answer (no 404 on any page); and a full-page screenshot at
// the project's size, written to e2e-screenshots/<project>/ for a reviewer to look at (never compared).
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";

const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"];

async function expectNoSeriousViolations(page: Page, what: string) {
  // Legacy mode runs axe.run() in the page itself (same-origin frames included) instead of finishing in a new
  // tab: faster, and it never opens a page beside the one under test.
  const results = await new AxeBuilder({ page }).withTags(AXE_TAGS).setLegacyMode(true).analyze();
  const serious = results.violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.help}\n    ${violation.nodes.map((node) => `${node.target.join(" ")}: ${node.failureSummary ?? ""}`).slice(0, 5).join("\n    ")}`);
  expect(serious, `axe on ${what}`).toEqual([]);
}

const checkedAssets = new Set<string>();

/** Every icon, touch icon and manifest the page links to answers 200, and so does every icon the manifest names. */
async function expectAssetsAnswer(page: Page, what: string) {
  const hrefs = await page.locator('link[rel~="icon"], link[rel="apple-touch-icon"], link[rel="manifest"]').evaluateAll((links) => links.map((link) => (link as HTMLLinkElement).href));
  expect(hrefs.length, `icons and manifest linked from ${what}`).toBeGreaterThanOrEqual(3);
  for (const href of hrefs.filter((h) => !checkedAssets.has(h))) {
    const response = await page.request.get(href);
    expect(response.status(), href).toBe(200);
    checkedAssets.add(href);
    if (href.endsWith(".webmanifest")) {
      const manifest = (await response.json()) as { icons: { src: string }[] };
      for (const icon of manifest.icons) expect((await page.request.get(new URL(icon.src, href).href)).status(), icon.src).toBe(200);
    }
  }
}

/**
 * Checks the page as it is now and keeps its screenshot as `<name>.png`. In the desktop project the page is
 * checked again in dark mode (`<name>-dark.png`).
 */
export async function checkPage(page: Page, name: string, options: { assets?: boolean } = {}) {
  const project = test.info().project.name;
  // Style sheets, images and fonts in, so that the screenshot and the contrast checks see the finished page.
  await page.waitForLoadState("load");
  await page.evaluate(() => document.fonts.ready.then(() => undefined));
  await expectNoSeriousViolations(page, `${name} (${project})`);
  if (options.assets !== false) await expectAssetsAnswer(page, name);
  await page.screenshot({ path: `e2e-screenshots/${project}/${name}.png`, fullPage: true });
  if (project === "desktop") {
    await page.emulateMedia({ colorScheme: "dark" });
    await expectNoSeriousViolations(page, `${name} (${project}, dark)`);
    await page.screenshot({ path: `e2e-screenshots/${project}/${name}-dark.png`, fullPage: true });
    await page.emulateMedia({ colorScheme: "light" });
  }
}

/** The phone project runs at a phone's size: the header's links are behind "Menu" there. */
export const isPhone = () => test.info().project.name === "phone";

/** Opens the header's menu on a phone (a no-op on a desktop, where the links are always shown). */
export async function openMenu(page: Page) {
  if (!isPhone()) return;
  const menu = page.getByRole("button", { name: "Menu" });
  if ((await menu.getAttribute("aria-expanded")) !== "true") await menu.click();
}

/** Options for another browser context (a second person) at the project's size. */
export function contextOptions() {
  const { viewport, isMobile, hasTouch, deviceScaleFactor, baseURL } = test.info().project.use;
  return { viewport, isMobile, hasTouch, deviceScaleFactor, baseURL };
}
