import { readFile } from 'node:fs/promises'
import type { ExchangeRecord } from '../../src/index.ts'

/** One line of the proxy log, parsed. */
export interface ProxyLogLine {
  readonly t: number
  readonly url: string
  readonly headers: Record<string, string>
  readonly body?: unknown
  readonly warmfold: ExchangeRecord
}

/** The lines of the proxy log at `path`. */
export async function readProxyLog(path: string): Promise<ProxyLogLine[]> {
  const text = await readFile(path, 'utf8')
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as ProxyLogLine)
}
