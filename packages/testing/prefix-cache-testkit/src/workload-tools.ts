import type { Context } from '@cordisjs/core'
import { CODING_FIRST_MESSAGE, codingCorrection, codingStep } from './coding-workload.ts'
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

/**
 * The coding workload's tools (`read_file`, `bash`, `edit_file`): each returns the scripted
 * result of its step (found by its call id `call-N`), a shell call with its `Exit code:` line as
 * a shell tool reports it, after `stepSeconds` on the virtual clock.
 */
function registerCodingTools(ctx: Context, workload: ResolvedWorkload, clock: VirtualClock): void {
  for (const name of ['read_file', 'bash', 'edit_file']) {
    ctx.tools.register({
      name,
      description: `The ${name.replace('_', ' ')} tool.`,
      parameters: { type: 'object', properties: { path: { type: 'string' }, command: { type: 'string' } } },
      execute: async (_args, context) => {
        const match = /^call-(\d+)$/.exec(context.toolCallId)
        if (!match) throw new Error(`coding workload: unexpected tool call id ${JSON.stringify(context.toolCallId)}`)
        await clock.advance(workload.stepSeconds * 1000)
        return codingStep(Number(match[1]), workload.resultChars).result
      },
    })
  }
}

/** The user message that opens turn `turn` (from 0) of `workload`. */
export function firstMessage(workload: ResolvedWorkload, turn: number): string {
  if (workload.workload === 'coding') return turn === 0 ? CODING_FIRST_MESSAGE : codingCorrection(turn).text
  return turn === 0
    ? 'Refactor the module loader. Read every module first, then report.'
    : 'Go on with the next modules.'
}
