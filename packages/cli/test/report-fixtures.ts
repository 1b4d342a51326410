import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Context } from '@cordisjs/core'
import { textBlock, toolCallBlock } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import type {
  CacheObservation,
  WarmfoldHostOptions,
  WorkloadOptions,
  WorkloadRun,
} from '@warmfold/prefix-cache-testkit'
import { fillerText, mountWarmfoldHost, PrefixCacheService, runWorkload } from '@warmfold/prefix-cache-testkit'

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
 * Runs the scripted workload with its session kept as `<directory>/<id>.jsonl`: the workload's
 * host mounts the cache ledger, which logs a `cache/observation` for every request (with the
 * simulator's charge as the provider's usage) and a `cache/guard` for every summary call that is
 * not a warm replay.
 */
export async function workloadSessionLog(
  directory: string,
  id: string,
  options: WorkloadOptions,
): Promise<{ file: string; run: WorkloadRun }> {
  const run = await runWorkload(options, { sessionFile: { directory, id } })
  return { file: join(directory, `${id}.jsonl`), run }
}

/**
 * A session logged without the cache ledger, as a host that only stores replies leaves it: the
 * real loop, pruner and `engine` (default `BasicCompactionEngine`) at a 16,000-token window (one fold or more), with the provider's
 * usage on every reply computed by the prefix-cache simulator and reported the way DeepSeek
 * does (no cache-write count). Returns the log file.
 */
export async function usageSessionLog(
  directory: string,
  id: string,
  steps: number,
  engine?: WarmfoldHostOptions['engine'],
): Promise<string> {
  const ctx = new Context()
  await ctx.start()
  try {
    ctx.plugin(PrefixCacheService, { profile: 'bytes' })
    mountWarmfoldHost(ctx, {
      ...(engine ? { engine } : {}),
      ledger: false,
      sessions: { store: 'file', directory },
      engineConfig: { thresholdRatio: 0.7, retainRatio: 0.2 },
      pruner: { thresholdChars: 900, headChars: 400, tailChars: 200 },
    })
    let step = 0
    ctx.llm.registerAdapter(
      'scripted',
      new ScriptedAdapter({
        models: {
          coder: {
            contextWindow: 16000,
            defaultMaxTokens: 256,
            reasoning: { efforts: ['low', 'high', 'max'], defaultEffort: 'high' },
          },
        },
        responses: (request) => {
          const observation = ctx.prefixCache.observations.at(-1) as CacheObservation
          const usage = {
            inputTokens: observation.uncachedTokens,
            cacheReadTokens: observation.cachedTokens,
            outputTokens: 40,
          }
          if (request.purpose === 'compaction')
            return { content: `## Goal\n- Read every module.\n## Progress\n- ${step} modules read.`, usage }
          if (step >= steps) return { content: 'All modules are read.', usage }
          const index = step++
          return {
            content: [
              textBlock(fillerText(100 + index, 160)),
              toolCallBlock(`call-${index}`, 'read_file', `{"path":"src/module-${index}.ts"}`),
            ],
            usage,
          }
        },
      }),
    )
    let reads = 0
    ctx.tools.register({
      name: 'read_file',
      description: 'Read a file.',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      execute: () => fillerText(500 + reads, reads++ % 3 === 2 ? 1200 : 700),
    })
    const agent = await ctx.agentLoop.create(id, {
      provider: 'scripted',
      model: 'coder',
      reasoningEffort: 'max',
      system: `You are a careful coding agent. ${fillerText(7, 400)}`,
    })
    agent.followup('Read every module, then report.')
    await agent.whenIdle()
    return join(directory, `${id}.jsonl`)
  } finally {
    await ctx.stop()
  }
}
