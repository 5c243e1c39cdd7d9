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
  const response = await fetch(url, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body, redirect: 'manual' })
  const text = await response.text()
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {}
  return { status: response.status, headers: response.headers, body: parsed as T, text }
}
