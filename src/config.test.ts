import { describe, expect, it } from 'vitest'
import { readConfig } from './config.ts'

describe('EPISODIC_EMBEDDED_SHARED_BUFFERS', () => {
  it("sizes the embedded database's shared buffers in PostgreSQL's units", () => {
    expect(readConfig({}).database.sharedBuffers).toBeUndefined()
    expect(readConfig({ EPISODIC_EMBEDDED_SHARED_BUFFERS: '16MB' }).database.sharedBuffers).toBe('16MB')
    expect(readConfig({ EPISODIC_EMBEDDED_SHARED_BUFFERS: '128kB' }).database.sharedBuffers).toBe('128kB')
    expect(readConfig({ EPISODIC_EMBEDDED_SHARED_BUFFERS: '1GB' }).database.sharedBuffers).toBe('1GB')
    // As every variable: surrounding blanks are dropped, and an empty value is unset.
    expect(readConfig({ EPISODIC_EMBEDDED_SHARED_BUFFERS: ' 32MB ' }).database.sharedBuffers).toBe('32MB')
    expect(readConfig({ EPISODIC_EMBEDDED_SHARED_BUFFERS: '' }).database.sharedBuffers).toBeUndefined()
  })

  it('names the variable and the accepted range when the size is not one', () => {
    for (const value of ['16', '16mb', '64kB', '2GB', '1.5MB', '-16MB', '16 MB']) {
      expect(() => readConfig({ EPISODIC_EMBEDDED_SHARED_BUFFERS: value }), value).toThrow(
        `EPISODIC_EMBEDDED_SHARED_BUFFERS must be a size from 128kB to 1GB, such as 32MB (got "${value}")`,
      )
    }
  })

  it('is refused beside DATABASE_URL, where there is no embedded database to size', () => {
    expect(() => readConfig({ DATABASE_URL: 'postgres://localhost/episodic', EPISODIC_EMBEDDED_SHARED_BUFFERS: '16MB' })).toThrow(
      'EPISODIC_EMBEDDED_SHARED_BUFFERS sizes the embedded database, which DATABASE_URL replaces',
    )
  })
})

describe('public addresses', () => {
  it('takes http(s) URLs and refuses anything else, naming the variable', () => {
    expect(readConfig({ S3_PUBLIC_BASE_URL: 'https://files.example.com/bucket' }).storage).toMatchObject({ publicBaseUrl: 'https://files.example.com/bucket' })
    expect(readConfig({ EPISODIC_PUBLIC_URL: 'http://10.0.0.2:8080' }).baseUrl).toBe('http://10.0.0.2:8080')
    for (const [name, value] of [['S3_PUBLIC_BASE_URL', 'notaurl'], ['S3_PUBLIC_BASE_URL', 'ftp://x'], ['EPISODIC_PUBLIC_URL', 'example.com']]) {
      expect(() => readConfig({ [name!]: value }), value).toThrow(`${name} must be an http(s) URL such as https://files.example.com (got "${value}")`)
    }
  })
})

describe('S3_ENDPOINT', () => {
  const s3 = { S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'k', S3_SECRET_ACCESS_KEY: 's' }
  it("refuses what is not a URL, such as .env.example's placeholder left in", () => {
    for (const value of ['https://<account_id>.r2.cloudflarestorage.com', 'r2.example.com', 'https://']) {
      expect(() => readConfig({ ...s3, S3_ENDPOINT: value }), value).toThrow(`S3_ENDPOINT must be an http(s) URL (got "${value}")`)
    }
    expect(readConfig({ ...s3, S3_ENDPOINT: 'https://abc.r2.cloudflarestorage.com/' }).storage).toMatchObject({
      s3: { endpoint: 'https://abc.r2.cloudflarestorage.com' },
    })
  })
})
