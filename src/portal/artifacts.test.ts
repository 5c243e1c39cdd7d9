import { describe, expect, it } from 'vitest'
import type { Episode } from '../episodes/ingest-schemas.ts'
import { createLocalStorage } from '../storage/local.ts'
import { createMemoryFiles } from '../storage/memory-files.ts'
import { Artifacts } from './artifacts.tsx'

const episode = { episode_id: '0b5e0000-0000-4000-8000-000000000001', client_id: 'c1', artifacts: ['video', 'actions'] } as Episode

async function render(stored: Record<string, string>, storage = true) {
  const files = createMemoryFiles()
  for (const [name, body] of Object.entries(stored)) await files.put(`c1/${episode.episode_id}/${name}`, new Response(body).body!)
  const deps = { storage: storage ? createLocalStorage({ files, secret: 's' }) : null }
  return String(await (await Artifacts({ deps, episode })).toString())
}

describe('episode page artifacts', () => {
  it('shows a present artifact with its size and link, a missing one as missing, and no player without the video', async () => {
    const html = await render({ 'actions.npz': 'x'.repeat(2048) })
    expect(html).toMatch(/data-kind="actions" data-present="true"/)
    expect(html).toContain('2.0 kB')
    expect(html).toContain(`/api/episodes/${episode.episode_id}/artifact/actions?redirect=1`)
    expect(html).toMatch(/data-kind="video" data-present="false"/)
    expect(html).toContain('missing')
    expect(html).not.toContain('<video')
    expect(html).not.toContain('artifact/video')
  })

  it('shows the player once the video is there', async () => {
    const html = await render({ 'video.mp4': 'mp4', 'actions.npz': 'a' })
    expect(html).toContain('<video')
    expect(html).toMatch(/data-kind="video" data-present="true"/)
  })

  it('says when the deployment has no object storage', async () => {
    expect(await render({}, false)).toContain('no object storage')
  })
})
