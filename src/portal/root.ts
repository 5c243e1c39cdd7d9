/**
 * The path the app is served under: '' at the root, '/episodic' when it is
 * mounted behind a prefix. It comes from the configured public URL
 * (`EPISODIC_PUBLIC_URL`, the core's `baseUrl`), which a prefixed mount sets
 * anyway so that signed URLs point under the prefix. Every portal link and
 * redirect starts with it; pages read it through `useRoot()`.
 */
import { createContext, useContext } from 'hono/jsx'

/** The root path while a page renders (see `sendPage`). */
export const RootPath = createContext('')

/** The root path inside a page component. */
export function useRoot(): string {
  return useContext(RootPath)
}

/** The root path of a public URL: its path without a trailing slash ('' when unset). */
export function rootPath(baseUrl: string | undefined): string {
  return baseUrl ? new URL(baseUrl).pathname.replace(/\/+$/, '') : ''
}
