import type { PostgresServer } from '@warmfold/test-utils'
import { startPostgres } from '@warmfold/test-utils'
import { postgresSessionStore } from '@warmfold/session-store-postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SessionReport } from '../src/index.ts'
import { cli } from './run-cli.ts'
import { prefixShare, twoReplicas } from './support/proxy-replicas.ts'

let server: PostgresServer
beforeAll(async () => {
  server = await startPostgres()
}, 60_000)
afterAll(() => server?.stop())

describe('warmfold proxy --store postgres: two replicas behind one address', () => {
  it(
    'a summary request reaching replica B is rewritten warm from the conversation request replica A forwarded; ' +
      "warmfold report --store postgres reads each replica's session without printing the password",
    { timeout: 120_000 },
    async () => {
      const url = server.url.replace('postgres@', 'postgres:hunter2@')
      const { requests, statuses, received, replicas } = await twoReplicas(() => postgresSessionStore({ url }))
      expect(statuses).toEqual([200, 200, 200])
      expect(received.slice(0, 2)).toEqual([requests[0]!.bytes, requests[1]!.bytes])
      expect(prefixShare(requests[1]!.bytes, received[2]!)).toBeGreaterThanOrEqual(0.98)
      expect(prefixShare(requests[1]!.bytes, requests[2]!.bytes)).toBeLessThan(0.5)

      const reports: SessionReport[] = []
      for (const id of replicas) {
        const result = await cli(['report', '--store', `postgres:${url}`, id, '--json', '--price', 'openai'])
        expect(result.stderr).toBe('')
        expect(result.code).toBe(0)
        expect(result.stdout).not.toContain('hunter2')
        reports.push(JSON.parse(result.stdout) as SessionReport)
      }
      expect(reports.map((report) => report.totals.purposes)).toEqual([[['conversation', 2]], [['compaction', 1]]])
      expect(reports[1]?.requests[0]?.detail).toMatch(/rewrite \(qwen-code\) sent warm/)
      // Each replica deleted its remembered requests when it stopped: only the two log sessions remain.
      const backend = postgresSessionStore({ url })
      try {
        expect((await backend.list()).toSorted()).toEqual([...replicas].toSorted())
      } finally {
        await backend.close()
      }
    },
  )
})
