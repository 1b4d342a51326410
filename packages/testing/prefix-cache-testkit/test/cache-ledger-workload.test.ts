import { PromptRenderer } from '@warmfold/cache-ledger/prefix'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@cordisjs/core'
import type { CacheObservationData } from '@warmfold/cache-ledger'
import type { GenerateOptions } from '@warmfold/llm'
import { canonicalJson, promptView } from '@warmfold/llm'
import type { AnySessionEvent, Session } from '@warmfold/session'
import { SessionStore } from '@warmfold/session'
import { describe, expect, it } from 'vitest'
import type { RunWorkloadHooks, WorkloadOptions, WorkloadRun, WorkloadStrategy } from '../src/index.ts'
import { runWorkload, STRATEGIES } from '../src/index.ts'

/**
 * Runs the workload and records every cordis warning and error of its context, and the order in
 * which requests finished: the ledger logs a request's observation when it finishes, so a
 * background summary call is logged after the conversation requests sent while it ran.
 */
async function run(
  options: WorkloadOptions,
  hooks: RunWorkloadHooks = {},
): Promise<{ run: WorkloadRun; problems: string[]; finished: GenerateOptions[] }> {
  const problems: string[] = []
  const finished: GenerateOptions[] = []
  const result = await runWorkload(options, {
    ...hooks,
    configure(ctx) {
      ctx.on('internal/warning', (...args: unknown[]) => void problems.push(`warning: ${args.map(String).join(' ')}`))
      ctx.on('internal/error', (...args: unknown[]) => void problems.push(`error: ${args.map(String).join(' ')}`))
      ctx.on('llm/finish', (request: GenerateOptions) => void finished.push(request))
      hooks.configure?.(ctx)
    },
  })
  return { run: result, problems, finished }
}

/** Characters of canonical JSON text with each escape counted as the one character it stands for (`\\uXXXX` is six, other escapes two). */
function unescapedLength(json: string): number {
  let length = json.length
  for (let index = json.indexOf('\\'); index !== -1; index = json.indexOf('\\', index)) {
    const size = json[index + 1] === 'u' ? 6 : 2
    length -= size - 1
    index += size
  }
  return length
}

function observationsOf(session: Session): CacheObservationData[] {
  return session.events
    .filter((event) => event.type === 'cache/observation')
    .map((event) => event.data as CacheObservationData)
}

/** What a request sends: its settings and the prompt view of each message (ids and sources are random provenance). */
function sent(request: GenerateOptions): string {
  const { signal: _signal, messages, ...data } = request
  return canonicalJson({ ...data, messages: messages.map(promptView) })
}

/** The log's event types and surface operations, the ledger's own events left out. */
function withoutLedger(events: readonly AnySessionEvent[]): string[] {
  return events
    .filter((event) => !event.type.startsWith('cache/'))
    .map((event) => `${event.type} ${event.surface?.op ?? ''}`)
}

describe('the cache ledger in every workload run', () => {
  it('observes every request of a full run with real compaction, breaks nothing and changes no request', async () => {
    const withLedger = await run({})
    const without = await run({}, { ledger: false })
    expect(withLedger.problems).toEqual([])
    expect(withLedger.run.completed).toBe(true)
    expect(withLedger.run.silentRewrites).toBe(0)
    // The invariant checker rejects an append that breaks a bracket or an adjacency, which would end the turn: the run completed with every fold.
    expect(withLedger.run.session.events.filter((event) => event.type === 'compaction/summary')).toHaveLength(3)
    // C1: the ledger's events never reach a prompt, and the run without it sent the same bytes and logged the same events.
    expect(withLedger.run.requests.map(sent)).toEqual(without.run.requests.map(sent))
    expect(withoutLedger(withLedger.run.session.events)).toEqual(withoutLedger(without.run.session.events))
    expect(without.run.session.events.some((event) => event.type.startsWith('cache/'))).toBe(false)

    const observations = observationsOf(withLedger.run.session)
    expect(observations).toHaveLength(withLedger.run.requests.length)
    expect(observations.map((observation) => observation.purpose)).toEqual(
      withLedger.finished.map((request) => request.purpose),
    )
    // The background folds ran beside the conversation: a summary call was logged after a conversation request sent after it.
    expect(withLedger.finished).not.toEqual(withLedger.run.requests)
    // Each conversation request after a fold breaks at the checkpoint; nothing else breaks.
    expect(
      observations
        .filter((observation) => observation.cause !== 'none')
        .map((observation) => `${observation.purpose}:${observation.cause}`),
    ).toEqual(['conversation:fold', 'conversation:fold', 'conversation:fold'])
    expect(withLedger.run.guardWarnings).toBe(0)
  })

  it('agrees with the simulator on every request: the same segments, counted as the model reads them, and the expected prefix is its match in whole content blocks', async () => {
    const { run: result, finished } = await run({ window: 32000 })
    const simulated = result.cache.observations
    const observations = observationsOf(result.session)
    const renderer = new PromptRenderer(canonicalJson)
    expect(finished).toHaveLength(result.requests.length)
    // The ledger's k-th observation is of the k-th request to finish; the simulator's are in send order.
    finished.forEach((request, logged) => {
      const index = result.requests.indexOf(request)
      const layout = renderer.layout(request)
      const sizes = layout.segments.map((segment) => unescapedLength(segment.text))
      expect(observations[logged]!.chars, `request ${index}`).toBe(sizes.reduce((sum, size) => sum + size, 0))
      // The simulator matches bytes; the ledger keeps hashes, so it stops at the last whole block the simulator matched.
      const whole = layout.offsets.filter((offset, at) => at > 0 && offset <= simulated[index]!.matchedChars).length
      expect(observations[logged]!.expected, `request ${index}`).toBe(
        sizes.slice(0, whole).reduce((sum, size) => sum + size, 0),
      )
    })
  })

  it("names expiry where the simulator's cache expired (anthropic profile, idle turns)", async () => {
    const { run: result, finished } = await run({ window: 32000, turns: 3, idleSeconds: 600, profile: 'anthropic' })
    const causes = observationsOf(result.session).map((observation) => observation.cause === 'expired')
    // In the ledger's order: the order requests finished.
    const simulated = finished.map(
      (request) => result.cache.observations[result.requests.indexOf(request)]!.divergence.part === 'expired',
    )
    expect(causes.filter(Boolean).length).toBeGreaterThan(0)
    expect(causes).toEqual(simulated)
  })

  // Rule C3: the summary call must be the last conversation request's prefix plus one instruction.
  // long-instruction appends its instruction as a message of its own whenever the region ends with a
  // tool result, as every region of this workload does, so it passes; appended to a replayed user
  // message it would be flagged (the ledger's own tests cover that shape).
  const expected: Readonly<Record<WorkloadStrategy, 'none' | 'each call'>> = {
    warmfold: 'none',
    legacy: 'each call',
    cold: 'each call',
    transcript: 'each call',
    toolless: 'each call',
    'long-instruction': 'none',
  }

  it.each(STRATEGIES)('guardWarnings of %s', async (strategy) => {
    const { run: result, problems } = await run({ window: 32000, strategy })
    expect(problems).toEqual([])
    expect(result.summaryCalls.length).toBeGreaterThan(0)
    expect(result.guardWarnings).toBe(expected[strategy] === 'none' ? 0 : result.summaryCalls.length)
  })

  it("legacy at the model's default effort is flagged for the prune that rewrote the region it replays", async () => {
    const { run: result } = await run({ window: 32000, strategy: 'legacy', effort: 'high' })
    const guards = result.session.events
      .filter((event) => event.type === 'cache/guard')
      .map((event) => event.data as { divergence: { part: string }; reason: string })
    expect(guards.length).toBe(result.summaryCalls.length)
    for (const guard of guards) expect(guard.reason).toMatch(/a compaction\/prune rewrote it since$/)
  })

  it('logs at most 340 bytes per cache/observation line on average in a JSONL file (seed workload, 128k)', async () => {
    const { run: result } = await run({})
    const directory = await mkdtemp(join(tmpdir(), 'ledger-bytes-'))
    const ctx = new Context()
    await ctx.start()
    try {
      ctx.plugin(SessionStore, { store: 'file', directory })
      const store = ctx.sessions
      const copy = await store.create('seed')
      // The run's log, event for event, through the JSONL file store (the same seqs, so replaces cite the same events).
      for (const event of result.session.events) {
        const append = copy.append as (type: string, data: unknown, ...intent: unknown[]) => unknown
        append.call(copy, event.type, event.data, ...(event.surface ? [event.surface] : []))
      }
      await store.flush(copy)
      const lines = (await readFile(join(directory, 'seed.jsonl'), 'utf8'))
        .split('\n')
        .filter((line) => line.includes('"type":"cache/observation"'))
      expect(lines).toHaveLength(result.requests.length)
      const average = lines.reduce((sum, line) => sum + Buffer.byteLength(line, 'utf8') + 1, 0) / lines.length
      expect(average).toBeLessThanOrEqual(340)
      // The package README quotes the figure.
      const readme = await readFile(
        join(import.meta.dirname, '..', '..', '..', 'core', 'cache-ledger', 'README.md'),
        'utf8',
      )
      expect(readme).toContain(`**${Math.round(average)} bytes** per \`cache/observation\` line`)
    } finally {
      await ctx.stop()
      await rm(directory, { recursive: true, force: true })
    }
  })
})
