/**
 * `url` with its password replaced by `***`, for error messages and logs: a connection URL
 * names where the store writes, and its password must never reach a log. A string that does
 * not parse as a URL is not echoed at all (it could be a password pasted in the wrong place).
 */
export function redactUrl(url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return '(a connection string that is not a URL, not shown)'
  }
  if (parsed.password !== '') parsed.password = '***'
  // Collected first: `set` drops duplicate keys, which would shift a live iterator.
  const keys = Array.from(parsed.searchParams.keys())
  for (const key of keys) {
    if (/pass|secret|key/i.test(key)) parsed.searchParams.set(key, '***')
  }
  return parsed.toString()
}

/** Removes every occurrence of the URL's password from `text` (a driver message may echo it). */
export function scrubPassword(text: string, url: string): string {
  let password: string
  try {
    password = decodeURIComponent(new URL(url).password)
  } catch {
    return text
  }
  return password === '' ? text : text.split(password).join('***')
}
