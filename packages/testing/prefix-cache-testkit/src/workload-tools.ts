import type { Context } from '@cordisjs/core'
import { registerCodingTools } from './coding-tools.ts'
import type { VirtualClock } from './virtual-clock.ts'
import type { ResolvedWorkload } from './workload-options.ts'
import { fillerText } from './workload-text.ts'

/** The workload's tools; each call takes `stepSeconds` on the virtual clock (the tool step's own time). */
export function registerWorkloadTools(ctx: Context, workload: ResolvedWorkload, clock: VirtualClock): void {
  if (workload.workload === 'coding') return registerCodingTools(ctx, workload, clock)
  let calls = 0
  ctx.tools.register({
    name: 'read_file',
    description: 'Read a file of the repository.',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', description: 'Path from the repository root.' } },
      required: ['path'],
    },
    execute: async () => {
      const index = calls++
      await clock.advance(workload.stepSeconds * 1000)
      return fillerText(5000 + index, index % 3 === 2 ? workload.oversizedResultChars : workload.resultChars)
    },
  })
  for (const name of ['write_file', 'run_tests', 'search']) {
    ctx.tools.register({
      name,
      description: `The ${name.replace('_', ' ')} tool.`,
      parameters: { type: 'object', properties: { query: { type: 'string' } } },
      execute: () => 'ok',
    })
  }
}
