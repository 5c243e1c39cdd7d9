/** The errors a policy server's connection ends steps with. */
import { ConfigurationError } from '../../client/errors.ts'
import { withoutStack } from '../errors.ts'

/**
 * A policy error reported by the server: `stack` is the server's traceback.
 */
export class PolicyServerError extends Error {
  /** Always `'PolicyServerError'`, so the error can be matched by name across bundles. */
  override name = 'PolicyServerError'
  /** Builds the error from the server's traceback `text`; `where` names the step. */
  constructor(text: string, where: string) {
    const lines = text.trimEnd().split('\n')
    const last = lines.at(-1) ?? 'policy server error'
    super(`${last} (policy server, ${where})`)
    this.stack = [`${this.message}`, ...lines].join('\n')
  }
}

/** The policy server did not answer within `timeoutMs`; the connection was closed. */
export class PolicyServerTimeout extends Error {
  /** Always `'PolicyServerTimeout'`, so the error can be matched by name across bundles. */
  override readonly name = 'PolicyServerTimeout'
  /** Builds the error; `message` names the limit and the step. */
  constructor(message: string) {
    super(message)
    withoutStack(this)
  }
}

/** A step a server's clean close left unanswered after that connection answered others: sent again. */
export class Resend extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message)
  }
}

/** A connection that failed before the server's metadata: the server is not (or no longer) there. */
export class Unreachable extends ConfigurationError {}
