import { describe, expect, it } from 'vitest'
import { NO_API_KEY } from '../client/config.ts'
import { AuthError, ConfigurationError, ConflictError, NotFoundError, ServerError, TransportError } from '../client/errors.ts'
import { clientCliError, CliError, EXIT } from './exit.ts'

const mapped = (error: unknown) => {
  const out = clientCliError(error)
  expect(out).toBeInstanceOf(CliError)
  return { code: (out as CliError).exitCode, message: (out as CliError).message }
}

describe('clientCliError', () => {
  it('says who erred through the exit code', () => {
    expect(mapped(new ConfigurationError('base URL is not a URL'))).toEqual({ code: EXIT.config, message: 'base URL is not a URL' })
    expect(mapped(new AuthError('key revoked'))).toEqual({ code: EXIT.auth, message: 'authentication failed: key revoked' })
    expect(mapped(new TransportError('connection refused'))).toEqual({ code: EXIT.transport, message: 'connection refused' })
    expect(mapped(new ServerError('internal error', 500))).toEqual({ code: EXIT.failure, message: 'ServerError: internal error' })
    expect(mapped(new ConflictError('run is completed'))).toEqual({ code: EXIT.failure, message: 'ConflictError: run is completed' })
  })

  it("maps a 404 to exit 4 for every verb: the service does not tell an unknown id from another client's", () => {
    expect(mapped(new NotFoundError('episode 5f0c… not found'))).toEqual({
      code: EXIT.auth,
      message: "not found (unknown, or not this key's client): episode 5f0c… not found",
    })
  })

  it('names the variable and the flag when no API key is configured', () => {
    const { code, message } = mapped(new ConfigurationError(`${NO_API_KEY}: pass apiKey`))
    expect(code).toBe(EXIT.config)
    expect(message).toContain('EPISODIC_API_KEY')
    expect(message).toContain('--profile NAME')
    expect(message).toContain('~/.config/episodic/credentials')
    const xdg = clientCliError(new ConfigurationError(`${NO_API_KEY}: pass apiKey`), { XDG_CONFIG_HOME: '/etc/lab', HOME: '/home/ada' }) as CliError
    expect(xdg.message).toContain('a profile with api_key in /etc/lab/episodic/credentials')
  })

  it('passes other errors through unchanged', () => {
    const bug = new TypeError('x is undefined')
    expect(clientCliError(bug)).toBe(bug)
  })
})
