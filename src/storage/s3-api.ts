/**
 * The few S3 REST calls the service itself makes to a bucket: the multipart
 * protocol (CreateMultipartUpload, ListParts, CompleteMultipartUpload,
 * AbortMultipartUpload) and HeadObject. Requests are signed with SigV4
 * headers by `aws4fetch` and sent with the runtime's `fetch`, so the same code
 * runs under Node, Deno, Bun and on Workers (R2 accepts POST only
 * header-signed, not presigned, so the query presigner cannot make these).
 */
import { AwsClient } from 'aws4fetch'
import { encodeKeyPath } from './keys.ts'
import { type CompletedPart, type ObjectHead, StorageError, type StoredPart } from './types.ts'

/** What the calls need: the bucket's address and credentials. */
export interface S3ApiOptions {
  endpoint: string
  bucket: string
  region: string
  accessKeyId: string
  secretAccessKey: string
  /** The fetch to send with (default the global one). */
  fetch?: typeof fetch
  /** Deadline of one call, its answer's body included (default 30 s; CompleteMultipartUpload 10 times it). */
  timeoutMs?: number
}

/** The bucket calls, bound to one bucket. */
export interface S3Api {
  createMultipartUpload(key: string, contentType: string): Promise<string>
  listParts(key: string, uploadId: string): Promise<StoredPart[]>
  completeMultipartUpload(key: string, uploadId: string, parts: CompletedPart[]): Promise<string>
  abortMultipartUpload(key: string, uploadId: string): Promise<void>
  headObject(key: string): Promise<ObjectHead | null>
}

/** Builds the calls for one bucket (path-style, as the presigned URLs are). */
export function createS3Api(options: S3ApiOptions): S3Api {
  // aws4fetch only signs here (its own fetch, with retries, would not take the deadline below).
  const client = new AwsClient({ accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey, service: 's3', region: options.region })
  const send = options.fetch ?? globalThis.fetch.bind(globalThis)
  const base = `${options.endpoint.replace(/\/+$/, '')}/${encodeURIComponent(options.bucket)}`
  const urlOf = (key: string, query = '') => `${base}/${encodeKeyPath(key)}${query}`

  const timeoutMs = options.timeoutMs ?? 30_000

  /**
   * One signed call, answer read whole, within its deadline: a bucket that
   * stops answering (a frozen gateway) fails the call instead of holding the
   * request until the HTTP stack gives up (undici: 5 minutes).
   */
  async function call(
    method: string,
    url: string,
    what: string,
    init: { body?: string; headers?: Record<string, string>; slow?: boolean } = {},
  ): Promise<{ response: Response; text: string }> {
    const ms = init.slow ? 10 * timeoutMs : timeoutMs
    const signed = await client.sign(url, { method, body: init.body, headers: init.headers })
    const signal = AbortSignal.timeout(ms)
    try {
      const response = await send(signed, { signal })
      return { response, text: method === 'HEAD' ? '' : await response.text() }
    } catch (error) {
      if (!signal.aborted) throw error
      throw new StorageError('RequestTimeout', 504, `${what}: the object store did not answer within ${ms / 1000} s`)
    }
  }

  /** Resolves when the bucket exists (HeadBucket); a missing bucket is a StorageError naming it. */
  let bucketChecked: Promise<void> | undefined
  async function headBucket(): Promise<void> {
    const { response } = await call('HEAD', base, 'HeadBucket')
    if (response.status === 404) {
      throw new StorageError('NoSuchBucket', 404, `bucket "${options.bucket}" does not exist at ${options.endpoint} (S3_BUCKET, S3_ENDPOINT)`)
    }
  }

  function expectOk({ response, text }: { response: Response; text: string }, what: string): string {
    // CompleteMultipartUpload may answer 200 with an <Error> body (S3 documents this).
    if (response.ok && !/^\s*(<\?xml[^>]*>)?\s*<Error>/.test(text)) return text
    const code = tag(text, 'Code') ?? `HTTP${response.status}`
    const message = tag(text, 'Message') || `${what} failed with ${response.status}`
    throw new StorageError(code, response.ok ? 500 : response.status, `${what}: ${code}: ${message}`)
  }

  return {
    async createMultipartUpload(key, contentType) {
      const text = expectOk(
        await call('POST', urlOf(key, '?uploads'), 'CreateMultipartUpload', { headers: { 'content-type': contentType } }),
        'CreateMultipartUpload',
      )
      const uploadId = tag(text, 'UploadId')
      if (!uploadId) throw new StorageError('InternalError', 500, 'CreateMultipartUpload: no UploadId in the answer')
      return uploadId
    },

    async listParts(key, uploadId) {
      const parts: StoredPart[] = []
      let marker = 0
      // ListParts pages at 1,000 parts; an upload may have 10,000.
      for (;;) {
        const query = `?part-number-marker=${marker}&uploadId=${encodeURIComponent(uploadId)}`
        const text = expectOk(await call('GET', urlOf(key, query), 'ListParts'), 'ListParts')
        for (const part of blocks(text, 'Part')) {
          parts.push({
            partNumber: Number(tag(part, 'PartNumber')),
            size: Number(tag(part, 'Size')),
            etag: unescapeXml(tag(part, 'ETag') ?? '').replace(/"/g, ''),
          })
        }
        if (tag(text, 'IsTruncated') !== 'true') break
        const next = Number(tag(text, 'NextPartNumberMarker'))
        if (!(next > marker)) break
        marker = next
      }
      return parts.sort((a, b) => a.partNumber - b.partNumber)
    },

    async completeMultipartUpload(key, uploadId, parts) {
      const body = '<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
        parts.map((p) => `<Part><PartNumber>${p.partNumber}</PartNumber><ETag>"${escapeXml(p.etag.replace(/"/g, ''))}"</ETag></Part>`).join('') +
        '</CompleteMultipartUpload>'
      const text = expectOk(
        await call('POST', urlOf(key, `?uploadId=${encodeURIComponent(uploadId)}`), 'CompleteMultipartUpload', {
          body,
          headers: { 'content-type': 'application/xml' },
          slow: true,
        }),
        'CompleteMultipartUpload',
      )
      const etag = unescapeXml(tag(text, 'ETag') ?? '').replace(/"/g, '')
      // Some gateways (Ceph RGW 16) answer an empty <ETag/>: the object's HEAD has it.
      return etag || ((await this.headObject(key))?.etag ?? '')
    },

    async abortMultipartUpload(key, uploadId) {
      expectOk(await call('DELETE', urlOf(key, `?uploadId=${encodeURIComponent(uploadId)}`), 'AbortMultipartUpload'), 'AbortMultipartUpload')
    },

    async headObject(key) {
      const { response } = await call('HEAD', urlOf(key), 'HeadObject')
      if (response.status === 404) {
        // A HEAD's 404 has no body to tell a missing object from a missing bucket (a
        // misconfigured S3_BUCKET would read as every artifact absent): ask the bucket once.
        bucketChecked ??= headBucket()
        await bucketChecked.catch((error: unknown) => {
          bucketChecked = undefined // not remembered: the next 404 asks again
          throw error
        })
        return null
      }
      if (!response.ok) throw new StorageError(`HTTP${response.status}`, response.status, `HeadObject failed with ${response.status}`)
      return {
        size: Number(response.headers.get('content-length') ?? 0),
        etag: (response.headers.get('etag') ?? '').replace(/"/g, ''),
        contentType: response.headers.get('content-type'),
      }
    },
  }
}

/** Text of the first `<name>` element (enough for S3's flat answers). */
function tag(xml: string, name: string): string | undefined {
  return new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1]
}

/** The inner text of every `<name>...</name>` block. */
function blocks(xml: string, name: string): string[] {
  return [...xml.matchAll(new RegExp(`<${name}>([\\s\\S]*?)</${name}>`, 'g'))].map((m) => m[1]!)
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' }
const UNESCAPES: Record<string, string> = Object.fromEntries(Object.entries(ESCAPES).map(([c, e]) => [e, c]))

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)
}

function unescapeXml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|apos);/g, (e) => UNESCAPES[e]!)
}
