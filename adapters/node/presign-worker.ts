/**
 * The worker-thread side of `presignOnThread` (./presign-thread.ts): builds
 * the same signer from the spec in `workerData` (@smithy/signature-v4 with
 * node:crypto, as on the main thread) and answers each batch of jobs with one
 * message.
 */
import { parentPort, workerData } from 'node:worker_threads'
import type { BlobFiles, ObjectStorage } from '../../src/storage/types.ts'
import { signJob, storageFromSpec, type PresignAnswer, type PresignJob, type SigningSpec } from './presign-thread.ts'

/** Presigning never reads or writes objects; the worker has no files to give. */
const NO_FILES: BlobFiles = {
  put: () => Promise.reject(new Error('presign worker: no object files here')),
  get: () => Promise.reject(new Error('presign worker: no object files here')),
}

async function answer(storage: ObjectStorage, job: PresignJob): Promise<PresignAnswer> {
  try {
    const signed = await signJob(storage, job)
    return { id: job.id, url: signed.url, expiresAt: signed.expiresAt.getTime() }
  } catch (error) {
    return { id: job.id, error: error instanceof Error ? error.message : String(error) }
  }
}

const port = parentPort
if (port) {
  const storage = storageFromSpec(workerData as SigningSpec, NO_FILES)
  port.on('message', async (jobs: PresignJob[]) => {
    port.postMessage(await Promise.all(jobs.map((job) => answer(storage, job))))
  })
}
