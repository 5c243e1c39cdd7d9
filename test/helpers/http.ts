import { request as httpRequest } from 'node:http'
/** Tiny fetch helpers for the HTTP suites. */
export interface Reply<T = any> {
  status: number
  headers: Headers
  body: T
  text: string
}

export async function call<T = any>(
  url: string,
  init: { method?: string; key?: string; header?: 'bearer' | 'x-service-key'; body?: unknown; raw?: BodyInit; headers?: Record<string, string> } = {},
  /** Who answers: the network by default, or an app in-process (`app.request`). */
  fetchImpl: (url: string, init: RequestInit) => Promise<Response> = fetch,
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...init.headers }
  if (init.key !== undefined) {
    if (init.header === 'x-service-key') headers['x-service-key'] = init.key
    else headers.authorization = `Bearer ${init.key}`
  }
  let body: BodyInit | undefined = init.raw
  if (init.body !== undefined) {
    body = JSON.stringify(init.body)
    headers['content-type'] = 'application/json'
  }
  const request = () => fetchImpl(url, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body, redirect: 'manual' })
  let response: Response
  try {
    response = await request()
  } catch (error) {
    // A server that answers 413 before reading an oversized body closes that
    // connection; fetch may still pick the dead socket from its keep-alive pool
    // for the next request and fail writing it (ECONNRESET, before the server
    // saw anything). That request was never delivered, so sending it again is
    // what any client does.
    if ((error as { cause?: { code?: string } }).cause?.code !== 'ECONNRESET') throw error
    response = await request()
  }
  const text = await response.text()
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {
    // not JSON: the body stays the text
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text }
}

/**
 * A raw PUT that sends its headers (a declared length, say) and no body: the
 * answer must come before any body does (S3's size limits, 411).
 */
export function declaredPut(url: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'PUT', headers })
    req.on('error', reject)
    req.on('response', (res) => {
      let text = ''
      res.on('data', (chunk) => (text += chunk))
      res.on('end', () => (req.destroy(), resolve({ status: res.statusCode!, text })))
    })
    req.flushHeaders()
  })
}
