import { Context } from '@cordisjs/core'
import type { Agent } from '@warmfold/agent-loop'
import type { GenerateOptions } from '@warmfold/llm'
import { textOf, toolCallBlock } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import type { CacheObservation, Cost, PriceProfile } from '../src/index.ts'
import { costUsd, fillerText, mountWarmfoldHost, PrefixCacheService, requestCost, sumCosts } from '../src/index.ts'

/** Options of {@link runSubagentWorkload}. */
export interface SubagentWorkloadOptions {
  /**
   * `fork`: each subagent is `agent.fork` of the parent (its first request is the parent's last
   * plus its task); `cold`: a new agent with its own short system prompt and the task alone, which
   * first reads the files it needs (`contextReads`) because it does not have the parent's history.
   */
  readonly strategy: 'fork' | 'cold'
  /** Cache profile of the simulator (`anthropic`, `bytes`, …). */
  readonly profile: string
  readonly price: PriceProfile
  /** Parent steps (one file read each); default 24. */
  readonly steps?: number
  /** Parent steps after which it hands tasks to subagents; default 8, 16 and 24. */
  readonly delegateAt?: readonly number[]
  /** Subagents per hand-off; default 3. */
  readonly subagents?: number
  /** Files a cold subagent reads to learn what the parent already knows; default 4. */
  readonly contextReads?: number
  /** Output tokens billed per reply (the scripted model says little); default 60. */
  readonly outputTokens?: number
}

/** What {@link runSubagentWorkload} measured. */
export interface SubagentWorkloadRun {
  readonly strategy: 'fork' | 'cold'
  /** Every request the simulator charged, in order. */
  readonly observations: readonly CacheObservation[]
  /** The subagents' requests only. */
  readonly subagentObservations: readonly CacheObservation[]
  /** All requests, in input-token units under the price profile. */
  readonly cost: Cost
  /** The subagents' requests only. */
  readonly subagentCost: Cost
  /** `cost` in dollars (null when the profile has no dollar rate). */
  readonly usd: number | null
}

const PARENT_SYSTEM = `You are a coding agent working in a large TypeScript repository. ${fillerText(7, 6000)}`
const SUBAGENT_SYSTEM = `You are a search subagent. Answer the task briefly. ${fillerText(11, 1200)}`

/**
 * A parent agent that reads one file per step and, at fixed steps, hands search tasks to
 * subagents (through a `delegate` tool, so each answer becomes the tool result), run under the
 * prefix-cache simulator and priced. The same scripted content serves both strategies; a cold
 * subagent additionally reads the files its task needs, since it starts without the parent's
 * history. Each subagent runs one `search` call and answers.
 */
export async function runSubagentWorkload(options: SubagentWorkloadOptions): Promise<SubagentWorkloadRun> {
  const steps = options.steps ?? 24
  const delegateAt = new Set(options.delegateAt ?? [8, 16, 24])
  const subagents = options.subagents ?? 3
  const contextReads = options.contextReads ?? 4
  const ctx = new Context()
  await ctx.start()
  try {
    mountWarmfoldHost(ctx, { engineConfig: { auto: false }, ledger: false })
    ctx.plugin(PrefixCacheService, { profile: options.profile })
    let agent: Agent | undefined
    let handOffs = 0
    ctx.tools.register({
      name: 'read',
      description: 'Read a file of the repository',
      parameters: { type: 'object', properties: { path: { type: 'string' } } },
      execute: (args) =>
        `// ${(args as { path: string }).path}\n${fillerText((args as { path: string }).path.length * 31, 2400)}`,
    })
    ctx.tools.register({
      name: 'search',
      description: 'Search the repository',
      parameters: { type: 'object', properties: { query: { type: 'string' } } },
      execute: (args) => `matches for ${(args as { query: string }).query}:\n${fillerText(97, 600)}`,
    })
    ctx.tools.register({
      name: 'delegate',
      description: 'Hand search tasks to subagents; returns their answers',
      parameters: { type: 'object', properties: { tasks: { type: 'array', items: { type: 'string' } } } },
      execute: async (args) => {
        const tasks = (args as { tasks: string[] }).tasks
        handOffs += 1
        const answers = await Promise.all(
          tasks.map(async (task, index) => {
            if (options.strategy === 'fork') {
              const result = await agent!.fork({ task, sessionId: `sub-${handOffs}-${index}` })
              return result.answer ?? `failed: ${result.error}`
            }
            const cold = await ctx.agentLoop.create(`sub-${handOffs}-${index}`, {
              provider: 'sim',
              model: 'm',
              system: SUBAGENT_SYSTEM,
            })
            await cold.followup(task)
            return textOf(cold.session.deriveMessages().at(-1)!.content)
          }),
        )
        return answers.join('\n')
      },
    })
    const stepOf = new Map<string, number>()
    // The parent's replies in order: one read per step, a hand-off after each step in delegateAt.
    const plan: Array<{ kind: 'read' | 'delegate'; at: number }> = []
    for (let at = 1; at <= steps; at++) {
      plan.push({ kind: 'read', at })
      if (delegateAt.has(at)) plan.push({ kind: 'delegate', at })
    }
    ctx.llm.registerAdapter(
      'sim',
      new ScriptedAdapter({
        models: { m: { contextWindow: 400_000, defaultMaxTokens: 4000 } },
        responses: (request: GenerateOptions) => {
          const session = request.sessionId ?? ''
          const step = stepOf.get(session) ?? 0
          stepOf.set(session, step + 1)
          if (session === 'parent') {
            const action = plan[step]
            if (!action) return { content: 'Done.' }
            if (action.kind === 'delegate') {
              const tasks = Array.from(
                { length: subagents },
                (_, index) => `Search the repository for the users of module ${action.at}-${index} and list them.`,
              )
              return { content: [toolCallBlock(`delegate-${action.at}`, 'delegate', JSON.stringify({ tasks }))] }
            }
            return {
              content: [
                toolCallBlock(`read-${action.at}`, 'read', JSON.stringify({ path: `src/module-${action.at}.ts` })),
              ],
            }
          }
          // A subagent: a cold one first reads what the parent already had, then each searches once and answers.
          const reads = options.strategy === 'cold' ? contextReads : 0
          if (step < reads)
            return {
              content: [toolCallBlock(`ctx-${step}`, 'read', JSON.stringify({ path: `src/module-${step}.ts` }))],
            }
          if (step === reads)
            return { content: [toolCallBlock('search-1', 'search', JSON.stringify({ query: session }))] }
          return { content: `The users of ${session} are src/a.ts and src/b.ts.` }
        },
      }),
    )
    agent = await ctx.agentLoop.create('parent', { provider: 'sim', model: 'm', system: PARENT_SYSTEM })
    const result = await agent.followup('Refactor the repository module by module.')
    if (result.reason !== 'stop')
      throw new Error(
        `subagent workload: the parent's turn ended with ${result.reason}${result.error ? `: ${result.error}` : ''}`,
      )
    const observations = [...ctx.prefixCache.observations]
    const price = options.price
    const outputTokens = options.outputTokens ?? 60
    const costOf = (list: readonly CacheObservation[]) =>
      sumCosts(
        list.map((observation) =>
          requestCost(
            {
              cachedTokens: observation.cachedTokens,
              uncachedTokens: observation.uncachedTokens,
              cacheWriteTokens: observation.cacheWriteTokens,
              outputTokens,
            },
            price,
          ),
        ),
      )
    const subagentObservations = observations.filter((observation) => observation.sessionId?.startsWith('sub-'))
    const cost = costOf(observations)
    return {
      strategy: options.strategy,
      observations,
      subagentObservations,
      cost,
      subagentCost: costOf(subagentObservations),
      usd: costUsd(cost, price),
    }
  } finally {
    await ctx.stop()
  }
}
