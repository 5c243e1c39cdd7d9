/**
 * The worker-thread side of `presignOnThread` (./presign-thread.ts): builds
 * the same signer from the spec in `workerData` (@smithy/signature-v4 with
 * node:crypto, as on the main thread) and answers each batch of jobs with one
 * message.
 */
import { parentPort, workerData } from 'node:worker_threads'
import type { BlobFiles } from '../../src/storage/types.ts'
import { jobsOf, signJob, storageFromSpec, type PresignBatch, type PresignReply, type SigningSpec } from './presign-thread.ts'

/** Presigning never reads or writes objects; the worker has no files to give. */
const NO_FILES: BlobFiles = {
  put: () => Promise.reject(new Error('presign worker: no object files here')),
  get: () => Promise.reject(new Error('presign worker: no object files here')),
}

const port = parentPort
if (port) {
  const storage = storageFromSpec(workerData as SigningSpec, NO_FILES)
  port.on('message', async (batch: PresignBatch) => {
    const jobs = jobsOf(batch)
    const settled = await Promise.allSettled(jobs.map((job) => signJob(storage, job)))
    const reply: PresignReply = { id: batch.id, urls: [], expiresAt: [], errors: null }
    settled.forEach((result, i) => {
      if (result.status === 'fulfilled') {
        reply.urls.push(result.value.url)
        reply.expiresAt.push(result.value.expiresAt.getTime())
        return
      }
      reply.errors ??= jobs.map(() => null)
      reply.errors[i] = result.reason instanceof Error ? result.reason.message : String(result.reason)
      reply.urls.push('')
      reply.expiresAt.push(0)
    })
    port.postMessage(reply)
  })
}
