import { describe, expect, it } from 'vitest'
import { RECORD_FIXTURES, writeAgentFixtures } from './agents/fixtures.ts'
import { summaryPrefixShares } from './agents/prefix-share.ts'
import { QWEN_CONTEXT_WINDOW, qwenCode } from './agents/qwen-code.ts'
import { describeRun, runAgent } from './agents/run-agent.ts'
import { FINAL_TEXT } from './agents/task.ts'

// Heavy set: installs @qwen-code/qwen-code from npm once (into ~/.cache/warmfold-agents) and runs it as a process.
describe(`Qwen Code ${qwenCode.version} against the scripted Chat Completions upstream`, () => {
  it('finishes its task, compacts once on the way, and its summary request is cold', { timeout: 300_000 }, async () => {
    const run = await runAgent(qwenCode)
    const context = `exit ${run.exitCode}, stderr: ${run.stderr.slice(-1500)}`
    expect(run.timedOut, context).toBe(false)
    expect(run.exitCode, context).toBe(0)
    expect(run.stdout).toContain(FINAL_TEXT)
    const kinds = run.requests.map((entry) => entry.kind)
    expect(kinds.filter((kind) => kind === 'summary')).toHaveLength(1)
    // After the summary the agent goes on with its task: the final answer comes from a conversation request.
    expect(kinds.lastIndexOf('conversation')).toBeGreaterThan(kinds.indexOf('summary'))
    const shares = summaryPrefixShares(run.requests, 'openai-chat')
    // The cold shape: the compression prompt replaces the system prompt and the tools are dropped, so the
    // summary request shares nothing with the request before it in render order (tools come first).
    expect(shares[0]?.share).toBeLessThan(0.05)
    console.log(describeRun(run))
    if (RECORD_FIXTURES)
      writeAgentFixtures(qwenCode, run, [
        `Settings: \`~/.qwen/settings.json\` sets \`model.generationConfig.contextWindowSize\` to ${QWEN_CONTEXT_WINDOW}`,
        '(auto-compaction at window − 33,000 = 22,000 tokens), background memory, follow-up suggestions, telemetry',
        'and update checks off. The scripted server reports usage as body characters / 4.',
        `${describeRun(run)}.`,
        `Summary prefix share of the request before it: ${JSON.stringify(shares)}.`,
      ])
  })
})
