/**
 * Debian's Chromium driven by playwright-core (no bundled browser download).
 * When Chromium is missing the browser suites are skipped with a loud
 * `SKIPPED: chromium not found` warning, except under `CI=true`, where a
 * missing browser fails the suite: CI must never pass by not looking.
 * `.ci/run` installs it (`apt-get install -y chromium`).
 */
import { existsSync } from 'node:fs'
import { type Browser, chromium, type Page } from 'playwright-core'
import { describeRequiring } from '../helpers/requires.ts'

/** Where Debian puts it; CHROMIUM_PATH overrides. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** Headless, sandbox-free (containers run as root), and quiet: no background traffic to Google. */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ARGS, headless: true })
}

/** `describe` that runs only when Chromium is installed (see the module doc for the CI rule). */
export function describeWithChromium(name: string, body: () => void, timeout = 90_000): void {
  const missing = `chromium not found at ${CHROMIUM_PATH}; install it (apt-get install -y chromium) or set CHROMIUM_PATH`
  describeRequiring(name, existsSync(CHROMIUM_PATH) ? null : missing, body, { timeout })
}

/** Signs `page` in to the portal at `baseUrl` through its login form, as a person does, and lands on `path`. */
export async function signIn(page: Page, baseUrl: string, key: string, path: string): Promise<void> {
  await page.goto(`${baseUrl}/portal/login?next=${encodeURIComponent(path)}`)
  await page.fill('input[name=api_key]', key)
  await Promise.all([page.waitForURL((url) => url.pathname !== '/portal/login'), page.click('button[type=submit]')])
}
