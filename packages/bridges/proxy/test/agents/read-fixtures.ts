import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { AgentFixture } from './fixtures.ts'
import { FIXTURES_DIR } from './fixtures.ts'
import type { ClassifiedRequest, RequestKind } from './scripted-agent-server.ts'

const KINDS: readonly RequestKind[] = ['conversation', 'summary', 'side']

/**
 * The requests of one recorded run (`fixtures/<name>-<version>/NN-<kind>.json`), in order, as the
 * scripted server had them: raw body, parsed body, headers (credentials redacted).
 * @throws Error naming the file when its name or kind is not one {@link writeAgentFixtures} writes.
 */
export function readAgentFixtures(folder: string): ClassifiedRequest[] {
  const dir = join(FIXTURES_DIR, folder)
  return readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .toSorted()
    .map((file) => {
      const match = /^(\d+)-(\w+)\.json$/.exec(file)
      const kind = match?.[2] as RequestKind | undefined
      if (!match || kind === undefined || !KINDS.includes(kind))
        throw new Error(`${join(dir, file)}: not an NN-<kind>.json fixture (kinds: ${KINDS.join(', ')})`)
      const fixture = JSON.parse(readFileSync(join(dir, file), 'utf8')) as AgentFixture
      const body = fixture.rawBody ?? JSON.stringify(fixture.body)
      const request = {
        method: fixture.method,
        url: fixture.url,
        headers: fixture.headers,
        body,
        json: fixture.body,
        receivedAt: 0,
      }
      return { index: Number(match[1]), kind, request }
    })
}
