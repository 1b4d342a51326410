import { describe, expect, it } from 'vitest'
import { RECORD_FIXTURES, writeAgentFixtures } from './agents/fixtures.ts'
import { summaryPrefixShares } from './agents/prefix-share.ts'
import { QWEN_CONTEXT_WINDOW, qwenCodeSpec } from './agents/qwen-code.ts'
import { describeRun, runAgent } from './agents/run-agent.ts'
import { FINAL_TEXT } from './agents/task.ts'

const spec = qwenCodeSpec(true)

// Heavy set: installs @qwen-code/qwen-code from npm once (into ~/.cache/warmfold-agents) and runs it as a process.
describe(`Qwen Code ${spec.version} against the scripted Chat Completions upstream, default settings`, () => {
  it(
    'finishes its task, compacts on the way, and its summary requests are its warm cache-sharing ones',
    { timeout: 300_000 },
    async () => {
      const run = await runAgent(spec)
      const context = `exit ${run.exitCode}, stderr: ${run.stderr.slice(-1500)}`
      expect(run.timedOut, context).toBe(false)
      expect(run.exitCode, context).toBe(0)
      expect(run.stdout).toContain(FINAL_TEXT)
      const kinds = run.requests.map((entry) => entry.kind)
      // The retained history may reach the threshold again before the task ends: a second compaction, also warm.
      expect(kinds.filter((kind) => kind === 'summary').length, kinds.join(' ')).toBeGreaterThanOrEqual(1)
      // After the summary the agent goes on with its task: the final answer comes from a conversation request.
      expect(kinds.lastIndexOf('conversation')).toBeGreaterThan(kinds.indexOf('summary'))
      const shares = summaryPrefixShares(run.requests, 'openai-chat')
      // Since its cache-sharing compaction, Qwen Code's first summary request keeps the system prompt, the tools
      // and the history, and appends the compression prompt as a user message: warm. The scripted model answers
      // it with a <state_snapshot>, so the dedicated (cold) summarizer is never asked.
      expect(shares[0]?.share).toBeGreaterThan(0.9)
      const summary = run.requests.find((entry) => entry.kind === 'summary')?.request.json as Record<string, unknown>
      expect(summary.tools).toBeDefined()
      console.log(describeRun(run))
      if (RECORD_FIXTURES)
        writeAgentFixtures(spec, run, [
          `Settings: \`~/.qwen/settings.json\` sets \`model.generationConfig.contextWindowSize\` to ${QWEN_CONTEXT_WINDOW}`,
          '(auto-compaction at window − 33,000 = 22,000 tokens), background memory, follow-up suggestions, telemetry',
          'and update checks off; default cache sharing, so its summary request is the cache-sharing one (main',
          'system prompt and tools, the history, the compression prompt appended as a user message), answered with a',
          'snapshot. The scripted server reports usage as body characters / 4.',
          `${describeRun(run)}.`,
          `Summary prefix share of the request before it: ${JSON.stringify(shares)}.`,
        ])
    },
  )
})
