/**
 * The upload progress shown on stderr: one redrawn bar on a terminal
 * (bytes, rate, time left), plain lines at most every 5 seconds otherwise
 * (a log or CI keeps a readable record).
 */

const UNITS = ['B', 'kB', 'MB', 'GB', 'TB']

/** `1.2 GB` (decimal units). */
export function bytes(n: number): string {
  let value = n
  let unit = 0
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000
    unit++
  }
  return unit === 0 ? `${Math.round(n)} B` : `${value.toFixed(value >= 100 ? 0 : 1)} ${UNITS[unit]}`
}

/** `1:02:03` / `2:03`, or `?` when unknown. */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?'
  const s = Math.round(seconds)
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  const rest = String(s % 60).padStart(2, '0')
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`
}

export interface ProgressOptions {
  total: number
  write: (text: string) => void
  tty: boolean
  /** Terminal width (default 80). */
  columns?: number
  now?: () => number
}

/** A progress display over `total` bytes; `update(sent, label)` as bytes go out, `done()` at the end. */
export function createProgress(options: ProgressOptions) {
  const now = options.now ?? (() => Date.now())
  const started = now()
  let last = 0
  let lastLine = 0
  let sent = 0
  let label = ''

  function line(): string {
    const elapsed = Math.max((now() - started) / 1000, 0.001)
    const rate = sent / elapsed
    const left = rate > 0 ? (options.total - sent) / rate : NaN
    const share = options.total > 0 ? sent / options.total : 1
    return `${(share * 100).toFixed(0).padStart(3)}% ${bytes(sent)} / ${bytes(options.total)}  ${bytes(rate)}/s  ${duration(left)} left  ${label}`
  }

  function draw(force = false): void {
    const t = now()
    if (options.tty) {
      if (!force && t - last < 100) return
      last = t
      const text = line()
      const width = Math.max(10, (options.columns ?? 80) - text.length - 3)
      const filled = Math.round(width * Math.min(1, options.total > 0 ? sent / options.total : 1))
      options.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${text}\x1b[K`)
    } else if (force || t - lastLine >= 5000) {
      lastLine = t
      options.write(`${line()}\n`)
    }
  }

  return {
    update(total: number, what: string): void {
      sent = total
      label = what
      draw()
    },
    done(): void {
      label = 'done'
      draw(true)
      if (options.tty) options.write('\n')
    },
  }
}
