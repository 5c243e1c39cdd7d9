/**
 * `episodic upload`: opens an episode, uploads its files (multipart above
 * 64 MiB, parts in parallel, retried, resumable) with a progress display on
 * stderr, finalizes it with `bytes_total` and prints its id and portal link.
 *
 * With `--idempotency-key K` the command is safe to run again: the same key
 * reopens the same episode, files already stored are skipped, and multipart
 * uploads resume from their stored parts (their ids are kept in
 * `$XDG_CACHE_HOME/episodic/uploads/`). Ctrl-C stops cleanly: with a key the
 * stored parts stay for the next run; without one the multipart uploads are
 * aborted so nothing is left behind.
 */
import { createHash } from 'node:crypto'
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { EpisodicClient } from '../client/client.ts'
import { ServerError, TransportError, ValidationError } from '../client/errors.ts'
import { runtimeEnvironment } from '../client/environment.ts'
import { nodeUploadTransport } from '../../adapters/node/upload-transport.ts'
import { recordEpisode } from '../client/uploads.ts'
import { IDEMPOTENCY_KEY_SYNTAX, OpenEpisodeBody } from '../episodes/ingest-schemas.ts'
import { EpisodicError } from '../errors.ts'
import { parseBodyValue } from '../http/body.ts'
import { parseJson } from '../http/json.ts'
import type { ArtifactKind } from '../storage/types.ts'
import { clientCliError, CliError, configError, EXIT, usageError as anyUsageError } from './exit.ts'
import { HELP } from './help.ts'
import { cliIO, err, out } from './io.ts'
import { createProgress } from './progress.ts'

/** A usage error of this verb: one line, then `see episodic upload --help` (never the whole help). */
const usageError = (message: string) => anyUsageError(message, 'upload')

const OPTIONS = {
  video: { type: 'string' },
  sensors: { type: 'string' },
  actions: { type: 'string' },
  name: { type: 'string' },
  robot: { type: 'string' },
  'policy-version': { type: 'string' },
  'env-version': { type: 'string' },
  'git-sha': { type: 'string' },
  seed: { type: 'string' },
  fps: { type: 'string' },
  duration: { type: 'string' },
  source: { type: 'string' },
  metadata: { type: 'string' },
  'idempotency-key': { type: 'string' },
  verify: { type: 'boolean' },
  profile: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

const KINDS: ArtifactKind[] = ['video', 'sensors', 'actions']

/**
 * `--seed -5` as `--seed=-5`: parseArgs reads a value that starts with `-`
 * as an option, though a negative seed (any int64) is a value here.
 */
function numericValues(argv: string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const next = argv[i + 1]
    if (['--seed', '--fps', '--duration'].includes(argv[i]!) && next !== undefined && /^-\d/.test(next)) out.push(`${argv[i]}=${argv[++i]}`)
    else out.push(argv[i]!)
  }
  return out
}

export async function uploadCommand(argv: string[]): Promise<number> {
  let values
  try {
    ;({ values } = parseArgs({ args: numericValues(argv), options: OPTIONS, allowPositionals: false, strict: true }))
  } catch (error) {
    throw usageError((error as Error).message)
  }
  if (values.help) {
    out(HELP.upload)
    return EXIT.ok
  }
  const io = cliIO()
  // Files are read by the Node transport itself (1 MiB file reads into node:http), not as Web streams.
  const transport = nodeUploadTransport()
  const artifacts: Partial<Record<ArtifactKind, Blob>> = {}
  const files: Partial<Record<ArtifactKind, string>> = {}
  for (const kind of KINDS) {
    const path = values[kind]
    if (path === undefined) continue
    const file = resolve(io.cwd, path)
    files[kind] = file
    try {
      artifacts[kind] = await transport.open(file)
    } catch (error) {
      const why = (error as { code?: string }).code ?? (error as Error).message.replace(`${file} `, '')
      throw configError(`--${kind}: cannot read ${file} (${why})`)
    }
  }
  const episode = {
    name: values.name,
    robot: values.robot,
    policy_version: values['policy-version'],
    env_version: values['env-version'],
    git_sha: values['git-sha'],
    seed: values.seed === undefined ? undefined : seed(values.seed),
    fps: values.fps === undefined ? undefined : positive('--fps', values.fps),
    source: values.source === undefined ? undefined : source(values.source),
    metadata: values.metadata === undefined ? undefined : await metadata(values.metadata, io.cwd),
  }
  checkEpisode(clean(episode))
  // The run's wall-clock length, set at finalize (the files alone do not say it).
  const duration = values.duration === undefined ? undefined : atLeastZero('--duration', values.duration)
  const key = values['idempotency-key']
  if (key !== undefined && !IDEMPOTENCY_KEY_SYNTAX.test(key)) throw usageError('--idempotency-key: must be 1 to 255 printable ASCII characters')

  let client: EpisodicClient
  try {
    client = await EpisodicClient.connect({ profile: values.profile, environment: { ...runtimeEnvironment(), env: io.env } })
  } catch (error) {
    throw clientCliError(error, io.env)
  }
  const state = key === undefined ? undefined : statePath(client.keyId ?? client.baseUrl, key, io.env)
  const saved = state ? await readState(state) : {}
  // An interrupted multipart upload resumes only for the same file: same size, same modification time.
  const stamps = Object.fromEntries(await Promise.all(Object.keys(artifacts).map(async (kind) => [kind, await stampOf(files[kind as ArtifactKind]!)])))
  const resumable: Partial<Record<ArtifactKind, string>> = {}
  for (const [kind, uploadId] of Object.entries(saved.uploads ?? {}) as [ArtifactKind, string][]) {
    if (artifacts[kind] === undefined) continue
    if (saved.files?.[kind] === stamps[kind]) resumable[kind] = uploadId
    else {
      err(`episodic: ${files[kind]} changed since the interrupted upload; sending it afresh`)
      if (saved.episode) await client.abortMultipart(saved.episode, uploadId).catch(() => {})
    }
  }
  const total = Object.values(artifacts).reduce((sum, blob) => sum + blob.size, 0)
  // A terminal only when this command writes to the process's own stderr (not when run in-process with its own IO).
  const tty = io.env === process.env && Boolean(process.stderr.isTTY)
  const progress = createProgress({ total, write: (text) => io.stderr(text), tty, columns: tty ? process.stderr.columns : undefined })
  const sent = new Map<ArtifactKind, number>()
  const started = new Map<ArtifactKind, string>()
  const stop = new AbortController()
  const onSigint = () => {
    if (stop.signal.aborted) process.exit(EXIT.interrupted)
    stop.abort(new CliError('interrupted', EXIT.interrupted))
  }
  // Ctrl-C, or a SIGTERM (`timeout`, a CI runner stopping the job): the same orderly stop.
  process.on('SIGINT', onSigint)
  process.on('SIGTERM', onSigint)
  let episodeId: string | undefined
  try {
    const recorded = await recordEpisode(
      client,
      {
        episode: clean(episode),
        artifacts,
        idempotencyKey: key,
        verify: Boolean(values.verify),
        uploads: resumable,
        ...(duration === undefined ? {} : { finalize: { duration_s: duration } }),
      },
      {
        signal: stop.signal,
        put: transport.put,
        onProgress: ({ kind, sent: n }) => {
          sent.set(kind, n)
          // The bar counts every file; its label names the files still going out.
          const going = Object.entries(artifacts).filter(([k, blob]) => (sent.get(k as ArtifactKind) ?? 0) < blob.size).map(([k]) => k)
          progress.update([...sent.values()].reduce((a, b) => a + b, 0), going.length ? `sending ${going.join(', ')}` : 'finishing')
        },
        onMultipart: (kind, uploadId, episode) => {
          started.set(kind, uploadId)
          episodeId = episode
          if (state) void writeState(state, { episode, files: stamps, uploads: { ...resumable, ...Object.fromEntries(started) } })
        },
      },
    )
    episodeId = recorded.episode_id
    progress.done()
    for (const upload of recorded.uploads.filter((u) => u.sizeOnly)) {
      err(
        `note: ${upload.kind}: kept the stored object of this file's size without comparing bytes (a multipart object's ETag cannot be checked against a file); a file rewritten with the same size is not sent again`,
      )
    }
    if (state) await rm(state, { force: true })
    out(recorded.episode_id)
    err(
      `${
        recorded.reopened ? 'resumed' : 'recorded'
      } episode ${recorded.episode_id} (${recorded.finalized.status}); portal: ${client.baseUrl}/portal/episodes/${recorded.episode_id}`,
    )
    return EXIT.ok
  } catch (error) {
    if (stop.signal.aborted) {
      progress.done()
      if (key === undefined) await abortStarted(client, started, episodeId)
      err(
        key === undefined
          ? 'episodic: interrupted; the unfinished uploads were aborted and the episode, if opened, marked failed (--idempotency-key makes an upload resumable)'
          : `episodic: interrupted; run the same command again (same --idempotency-key) to resume`,
      )
      return EXIT.interrupted
    }
    // The same --idempotency-key with other flags or files: the caller's mistake (exit 2).
    if (error instanceof ValidationError && error.status === 422) throw usageError(`--idempotency-key: ${error.message.replace(/^POST \S+: /, '')}`)
    const failure = clientCliError(error, io.env)
    // Nothing is lost with a key: what was sent stays, and the same command goes on from there.
    if (key !== undefined && failure instanceof CliError && (error instanceof TransportError || error instanceof ServerError)) {
      failure.message += '\nrun the same command again (same --idempotency-key) to resume'
    }
    throw failure
  } finally {
    process.off('SIGINT', onSigint)
    process.off('SIGTERM', onSigint)
  }
}

/** Without a key nothing can resume: remove the parts stored so far. */
async function abortStarted(client: EpisodicClient, started: Map<ArtifactKind, string>, episodeId: string | undefined): Promise<void> {
  if (episodeId === undefined) return
  for (const uploadId of started.values()) await client.abortMultipart(episodeId, uploadId).catch(() => {})
}

function clean<T extends Record<string, unknown>>(record: T): Partial<T> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as Partial<T>
}

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/** `--seed`: any signed 64-bit integer, exact (a bigint past 2^53, as the client sends it). */
function seed(text: string): number | bigint {
  const digits = text.trim()
  if (!/^-?\d+$/.test(digits)) throw usageError(`--seed: must be an integer (got ${JSON.stringify(text)})`)
  const value = BigInt(digits)
  if (value < INT64_MIN || value > INT64_MAX) throw usageError(`--seed: must be within the signed 64-bit range, ${INT64_MIN} .. ${INT64_MAX}`)
  return Number.isSafeInteger(Number(value)) ? Number(value) : value
}

const DECIMAL = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/

function positive(flag: string, text: string): number {
  const value = Number(text)
  if (!DECIMAL.test(text) || !Number.isFinite(value) || value <= 0) throw usageError(`${flag}: must be a positive number`)
  return value
}

function atLeastZero(flag: string, text: string): number {
  const value = Number(text)
  if (!DECIMAL.test(text) || !Number.isFinite(value) || value < 0) throw usageError(`${flag}: must be a number of seconds, at least 0`)
  return value
}

function source(text: string): 'real' | 'sim' | 'replay' {
  if (text !== 'real' && text !== 'sim' && text !== 'replay') throw usageError('--source: must be one of real, sim, replay')
  return text
}

/**
 * The episode fields as the service validates them, checked before anything
 * is opened: a value it would refuse (a name over 200 characters, `\u0000` in
 * metadata) is the caller's flag, exit 2 naming it, not a failure after the fact.
 */
function checkEpisode(body: Record<string, unknown>): void {
  try {
    parseBodyValue(OpenEpisodeBody, body)
  } catch (error) {
    if (!(error instanceof EpisodicError)) throw error
    const field = /^([a-z_]+)[.:]/.exec(error.message)?.[1]
    throw usageError(
      field ? `--${field.replace(/_/g, '-')}: ${error.message.startsWith(`${field}:`) ? error.message.slice(field.length + 2) : error.message}` : error.message,
    )
  }
}

/** `--metadata '{"k":1}'` or `--metadata @file.json`; integers past 2^53 keep every digit (as bigint). */
async function metadata(text: string, cwd: string): Promise<Record<string, unknown>> {
  let json = text
  if (text.startsWith('@')) {
    try {
      json = await readFile(resolve(cwd, text.slice(1)), 'utf8')
    } catch {
      throw configError(`--metadata: cannot read ${resolve(cwd, text.slice(1))}`)
    }
  }
  let value: unknown
  try {
    value = parseJson(json, 'unsafe')
  } catch {
    throw usageError('--metadata: not valid JSON')
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw usageError('--metadata: must be a JSON object')
  return value as Record<string, unknown>
}

interface SavedState {
  /** The episode the uploads belong to (to abort one whose file changed). */
  episode?: string
  /** Each file's size and modification time when its upload began (`stampOf`). */
  files?: Partial<Record<ArtifactKind, string>>
  uploads?: Partial<Record<ArtifactKind, string>>
}

/** A file's size and modification time, `size:mtimeMs`: what must not change for an upload to resume. */
async function stampOf(path: string): Promise<string> {
  const info = await stat(path)
  return `${info.size}:${info.mtimeMs}`
}

/**
 * Where an idempotency key's multipart upload ids are kept between runs: per
 * API key (as the service keeps the idempotency key per client), so the same
 * command resumes through any instance of the service, whatever URL reaches it.
 */
function statePath(credential: string, key: string, env: Record<string, string | undefined>): string {
  const base = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache')
  return join(base, 'episodic', 'uploads', `${createHash('sha256').update(`${credential}\n${key}`).digest('hex').slice(0, 32)}.json`)
}

async function readState(path: string): Promise<SavedState> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as SavedState
  } catch {
    return {}
  }
}

async function writeState(path: string, state: SavedState): Promise<void> {
  await mkdir(dirname(path), { recursive: true })
  await writeFile(path, JSON.stringify(state))
}
