import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Context } from '@cordisjs/core'
import type { CacheBreakCause, CacheDivergence } from '@warmfold/cache-ledger'
import type { GenerateOptions } from '@warmfold/llm'
import { textBlock, toolCallBlock } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import type { CacheObservation, WarmfoldHostOptions, WorkloadOptions, WorkloadRun } from '@warmfold/prefix-cache-testkit'
import { fillerText, mountWarmfoldHost, PrefixCacheService, runWorkload } from '@warmfold/prefix-cache-testkit'
import type { SessionEventMap } from '@warmfold/session'

/** One line of a session log, parsed independently of the report's reader. */
export interface LogLine {
  readonly line: number
  readonly type: string
  readonly data: Record<string, any>
}

/** Every line of a session log file, parsed with JSON.parse. */
export async function logLines(file: string): Promise<LogLine[]> {
  const text = await readFile(file, 'utf8')
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line, index) => {
      const event = JSON.parse(line) as { type: string; data: Record<string, any> }
      return { line: index + 1, type: event.type, data: event.data }
    })
}

/**
 * Runs the scripted workload with its session kept as `<directory>/<id>.jsonl` and, until the
 * cache ledger is mounted in the workload's host, a `cache/observation` event appended for every
 * request through the real session API when the request reaches the provider, built from the
 * prefix-cache simulator's observation of it. With a ledger in the host, it logs its own events
 * and nothing is added here.
 */
export async function workloadSessionLog(directory: string, id: string, options: WorkloadOptions): Promise<{ file: string; run: WorkloadRun }> {
  let host: Context | undefined
  const run = await runWorkload(options, {
    sessionFile: { directory, id },
    configure: (ctx) => void (host = ctx.get('cacheLedger') ? undefined : ctx),
    onRequest: async (request) => {
      if (!host || request.sessionId === undefined) return
      const observation = host.prefixCache.observations.at(-1) as CacheObservation
      const session = await host.sessions.open(request.sessionId)
      session.append('cache/observation', ledgerObservation(observation, request, (options.stepSeconds ?? 15) * 1000))
    },
  })
  return { file: join(directory, `${id}.jsonl`), run }
}

/** The simulator's observation of `request` in the shape of the cache ledger's event. */
function ledgerObservation(observation: CacheObservation, request: GenerateOptions, stepMs: number): SessionEventMap['cache/observation'] {
  const found = observation.divergence
  let divergence: CacheDivergence
  let cause: CacheBreakCause
  const rewrites = new Set(observation.rewritesSince.map((rewrite) => rewrite.type))
  const rewriteCause: CacheBreakCause = rewrites.has('compaction/summary') ? 'fold' : rewrites.has('compaction/prune') ? 'prune' : rewrites.has('request/header') ? 'envelope' : 'unknown'
  switch (found.part) {
    case 'first':
      divergence = { part: 'first', charOffset: 0 }
      cause = 'none'
      break
    case 'none':
      divergence = { part: 'none', charOffset: observation.promptChars }
      cause = 'none'
      break
    case 'envelope':
      divergence = { part: 'envelope', field: found.field, charOffset: 0 }
      cause = 'envelope'
      break
    case 'expired':
      divergence = { part: 'none', charOffset: found.offset + found.expiredChars }
      cause = 'expired'
      break
    case 'tools':
    case 'system':
      divergence = { part: found.part, index: found.index, charOffset: found.offset }
      cause = found.part === 'tools' ? 'tools' : rewriteCause
      break
    case 'message': {
      divergence = { part: 'message', index: found.index, role: request.messages[found.index]?.role ?? 'unknown', charOffset: found.offset }
      // An extension diverges at its first new message, and a warm summary call at its instruction (the last message): nothing broke.
      const extended = request.purpose === 'conversation' ? observation.extendsPrevious : found.index === request.messages.length - 1
      cause = extended ? 'none' : rewriteCause
      break
    }
  }
  return {
    purpose: observation.purpose,
    provider: request.provider,
    model: request.model,
    promptTokens: observation.promptTokens,
    cachedTokens: observation.cachedTokens,
    cacheWriteTokens: observation.cacheWriteTokens,
    uncachedTokens: observation.uncachedTokens - observation.cacheWriteTokens,
    outputTokens: null,
    promptChars: observation.promptChars,
    expectedChars: found.part === 'expired' ? found.offset + found.expiredChars : observation.matchedChars,
    divergence,
    cause,
    idleMs: found.part === 'first' ? null : found.part === 'expired' ? found.idleMs : stepMs,
  }
}

/**
 * A session logged without the cache ledger, as a host that only stores replies leaves it: the
 * real loop, pruner and `engine` (default `BasicCompactionEngine`) at a 16,000-token window (one fold or more), with the provider's
 * usage on every reply computed by the prefix-cache simulator and reported the way DeepSeek
 * does (no cache-write count). Returns the log file.
 */
export async function usageSessionLog(directory: string, id: string, steps: number, engine?: WarmfoldHostOptions['engine']): Promise<string> {
  const ctx = new Context()
  await ctx.start()
  try {
    ctx.plugin(PrefixCacheService, { profile: 'bytes' })
    mountWarmfoldHost(ctx, { ...(engine ? { engine } : {}), sessions: { store: 'file', directory }, engineConfig: { thresholdRatio: 0.7, retainRatio: 0.2 }, pruner: { thresholdChars: 900, headChars: 400, tailChars: 200 } })
    let step = 0
    ctx.llm.registerAdapter(
      'scripted',
      new ScriptedAdapter({
        models: { coder: { contextWindow: 16000, defaultMaxTokens: 256, reasoning: { efforts: ['low', 'high', 'max'], defaultEffort: 'high' } } },
        responses: (request) => {
          const observation = ctx.prefixCache.observations.at(-1) as CacheObservation
          const usage = { inputTokens: observation.uncachedTokens, cacheReadTokens: observation.cachedTokens, outputTokens: 40 }
          if (request.purpose === 'compaction') return { content: `## Goal\n- Read every module.\n## Progress\n- ${step} modules read.`, usage }
          if (step >= steps) return { content: 'All modules are read.', usage }
          const index = step++
          return { content: [textBlock(fillerText(100 + index, 160)), toolCallBlock(`call-${index}`, 'read_file', `{"path":"src/module-${index}.ts"}`)], usage }
        },
      }),
    )
    let reads = 0
    ctx.tools.register({ name: 'read_file', description: 'Read a file.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }, execute: () => fillerText(500 + reads, reads++ % 3 === 2 ? 1200 : 700) })
    const agent = await ctx.agentLoop.create(id, { provider: 'scripted', model: 'coder', reasoningEffort: 'max', system: `You are a careful coding agent. ${fillerText(7, 400)}` })
    agent.followup('Read every module, then report.')
    await agent.whenIdle()
    return join(directory, `${id}.jsonl`)
  } finally {
    await ctx.stop()
  }
}
