/**
 * Our Standard Webhooks signatures, checked by the reference verifier (the
 * `standardwebhooks` package), not by our own code.
 */
import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { webRandom } from '../crypto.ts'
import { newSigningSecret, signedHeaders, signingKey } from './signature.ts'

describe('webhook signatures', () => {
  it('makes whsec_ secrets of 32 random bytes in standard base64', () => {
    const secret = newSigningSecret(webRandom)
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(signingKey(secret)).toHaveLength(32)
    expect(newSigningSecret(webRandom)).not.toBe(secret)
  })

  it('signs so that the reference verifier accepts the body and refuses a changed one', async () => {
    const secret = newSigningSecret(webRandom)
    const body = JSON.stringify({ type: 'eval_run.completed', id: 'msg_1', data: { name: 'ünïcode ✓' } })
    const headers = await signedHeaders(secret, 'msg_1', new Date(), body)
    expect(headers['webhook-id']).toBe('msg_1')
    expect(headers['webhook-timestamp']).toMatch(/^\d{10}$/)
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body))
    expect(() => new Webhook(secret).verify(body.replace('msg_1', 'msg_2'), headers)).toThrow()
    expect(() => new Webhook(newSigningSecret(webRandom)).verify(body, headers)).toThrow()
  })

  it('matches the reference signer byte for byte', async () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
    const at = new Date(1_614_265_330_000)
    const body = '{"test": 2432232314}'
    const ours = await signedHeaders(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', at, body)
    expect(ours['webhook-signature']).toBe(new Webhook(secret).sign('msg_p5jXN8AQM9LWM0D4loKWxJek', at, body))
  })

  it('refuses a secret without the whsec_ prefix', () => {
    expect(() => signingKey('abc')).toThrow('whsec_')
  })
})
