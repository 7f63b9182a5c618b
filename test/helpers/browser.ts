// Debian's Chromium, driven by playwright-core: one browser per test file, in
// a fresh profile folder, with the flags a headless CI machine needs. A page
// that opens a dialog (alert, confirm, prompt) is recorded, so a test can say
// that no script a tool or a principal wrote ever ran.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export interface TestBrowser {
  readonly context: BrowserContext;
  /** A new page; every dialog it opens is recorded and dismissed. */
  newPage(): Promise<Page>;
  /** Messages of the dialogs any page opened. */
  readonly dialogs: string[];
  close(): Promise<void>;
}

/** Starts Chromium with a fresh --user-data-dir and a fixed viewport. */
export async function launchBrowser(viewport = { width: 1280, height: 800 }): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'toolhost-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport,
    deviceScaleFactor: 1,
    locale: 'en-US',
    timezoneId: 'UTC',
  });
  const dialogs: string[] = [];
  const watch = (page: Page): void => {
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
  };
  context.on('page', watch);
  for (const page of context.pages()) watch(page);
  return {
    context,
    dialogs,
    newPage: () => context.newPage(),
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
