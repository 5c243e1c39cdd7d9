/**
 * Links between the project's Markdown files that name a section
 * (`[README](../README.md#portal)`) land on a heading that exists, with
 * GitHub's heading ids (lower case, punctuation dropped, spaces to dashes).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from './runtimes/harness.ts'

function markdownFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join(ROOT, 'docs', f))
  const examples = readdirSync(join(ROOT, 'examples')).map((d) => join(ROOT, 'examples', d, 'README.md')).filter((f) => existsSync(f))
  return [join(ROOT, 'README.md'), ...docs, ...examples]
}

/** GitHub's id of a heading's text. */
export function headingId(text: string): string {
  return text.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
}

function headingIds(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '')
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => headingId(m[1]!.replace(/`/g, ''))))
}

describe('Markdown section links', () => {
  it('computes GitHub heading ids', () => {
    expect(headingId('Portal and webhooks')).toBe('portal-and-webhooks')
    expect(headingId('Exact 64-bit seeds')).toBe('exact-64-bit-seeds')
  })

  it('point at headings that exist', () => {
    const broken: string[] = []
    for (const file of markdownFiles()) {
      const text = readFileSync(file, 'utf8')
      for (const [, target, anchor] of text.matchAll(/\]\(([^)#\s]*\.md)#([^)\s]+)\)/g)) {
        const path = join(dirname(file), target!)
        if (!existsSync(path) || !headingIds(path).has(anchor!)) broken.push(`${relative(ROOT, file)}: ${target}#${anchor}`)
      }
    }
    expect(broken).toEqual([])
  })
})
