import { Context } from '@cordisjs/core'
import type { SessionBackend } from '@warmfold/session'
import { SessionStore } from '@warmfold/session'
import { expect } from 'vitest'
import type { BenchReport } from '../../src/index.ts'

/**
 * Opens every run's session of a `warmfold bench --store` run from `store` and checks it is
 * whole: the runs' ids and no others, the progress line naming `shown` for each, as many
 * `compaction/summary` events as the run's summary calls, and a finished turn at the end.
 */
export async function expectBenchSessions(
  store: SessionBackend,
  report: BenchReport,
  stderr: string,
  shown: string,
): Promise<void> {
  const ctx = new Context()
  await ctx.start()
  try {
    ctx.plugin(SessionStore, { store })
    const ids = report.runs.map((run) => `${run.strategy}-${run.window}`)
    expect(await ctx.sessions.list()).toEqual(ids.toSorted())
    for (const [index, run] of report.runs.entries()) {
      const id = ids[index] as string
      expect(stderr).toContain(`session ${id} in ${shown}`)
      const session = await ctx.sessions.open(id)
      expect(session.events.filter((event) => event.type === 'compaction/summary')).toHaveLength(
        run.summaryCalls.length,
      )
      expect(session.events.at(-1)?.type).toBe('turn/end')
      await ctx.sessions.close(session)
    }
  } finally {
    await ctx.stop()
  }
}
