import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { usableDataFolder } from './data-folder.ts'

const root = mkdtempSync(join(tmpdir(), 'episodic-data-folder-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe('usableDataFolder', () => {
  it("creates a missing folder as the user's alone (0700): the first thing serve and the admin verbs do with it", () => {
    const dir = join(root, 'new', 'data')
    usableDataFolder(dir)
    expect(statSync(dir).mode & 0o777).toBe(0o700)
  })

  it('names EPISODIC_DATA_DIR when the path is a file', () => {
    const file = join(root, 'a-file')
    writeFileSync(file, '')
    expect(() => usableDataFolder(file)).toThrow(`data folder ${file} is a file, not a folder; set EPISODIC_DATA_DIR to a folder this user can write`)
  })
})
