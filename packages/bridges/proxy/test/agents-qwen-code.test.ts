import { describe, expect, it } from 'vitest'
import { RECORD_FIXTURES, writeAgentFixtures } from './agents/fixtures.ts'
import { QWEN_CONTEXT_WINDOW, qwenCodeSpec } from './agents/qwen-code.ts'
import { describeRun } from './agents/run-agent.ts'
import type { ProxiedRun } from './agents/through-proxy.ts'
import { describeShares, expectPassedThrough, runThroughProxy } from './agents/through-proxy.ts'

const spec = qwenCodeSpec(true)

/** The checks of both modes: its cache-sharing summary requests are already warm, and left untouched. */
function expectWarmSummaries(proxied: ProxiedRun) {
  const { run } = proxied
  const { shares } = expectPassedThrough(proxied, 'openai-chat', 'untouched')
  const kinds = run.requests.map((entry) => entry.kind)
  // The retained history may reach the threshold again before the task ends: a second compaction, also warm.
  expect(kinds.filter((kind) => kind === 'summary').length, kinds.join(' ')).toBeGreaterThanOrEqual(1)
  // After the summary the agent goes on with its task: the final answer comes from a conversation request.
  expect(kinds.lastIndexOf('conversation')).toBeGreaterThan(kinds.indexOf('summary'))
  // Since its cache-sharing compaction, Qwen Code's first summary request keeps the system prompt, the tools
  // and the history, and appends the compression prompt as a user message: warm. The scripted model answers
  // it with a <state_snapshot>, so the dedicated (cold) summarizer is never asked.
  expect(shares[0]?.share).toBeGreaterThan(0.9)
  const summary = run.requests.find((entry) => entry.kind === 'summary')?.request.json as Record<string, unknown>
  expect(summary.tools).toBeDefined()
  console.log(`${describeRun(run)}\n${describeShares(proxied, shares)}`)
  return shares
}

// Heavy set: installs @qwen-code/qwen-code from npm once (into ~/.cache/warmfold-agents) and runs it as a process,
// twice, through a real WarmfoldProxy in front of the scripted upstream: warm summaries off, then on.
describe(`Qwen Code ${spec.version} through warmfold proxy to the scripted Chat Completions upstream, default settings`, () => {
  it(
    'warm summaries off: finishes its task, its warm cache-sharing summary requests forwarded byte for byte',
    {
      timeout: 300_000,
    },
    async () => {
      const proxied = await runThroughProxy(spec, 'off')
      const shares = expectWarmSummaries(proxied)
      if (RECORD_FIXTURES)
        writeAgentFixtures(spec, proxied.run, [
          `Settings: \`~/.qwen/settings.json\` sets \`model.generationConfig.contextWindowSize\` to ${QWEN_CONTEXT_WINDOW}`,
          '(auto-compaction at window − 33,000 = 22,000 tokens), background memory, follow-up suggestions, telemetry',
          'and update checks off; default cache sharing, so its summary request is the cache-sharing one (main',
          'system prompt and tools, the history, the compression prompt appended as a user message), answered with a',
          'snapshot. The scripted server reports usage as body characters / 4. Recorded through `warmfold proxy`',
          'with warm summaries off (byte for byte).',
          `${describeRun(proxied.run)}.`,
          `Summary prefix share of the request before it: ${JSON.stringify(shares)}.`,
        ])
    },
  )

  it(
    'warm summaries on: the already-warm summary requests still reach the upstream byte for byte',
    {
      timeout: 300_000,
    },
    async () => {
      expectWarmSummaries(await runThroughProxy(spec, 'on'))
    },
  )
})
