import { describe, expect, it } from 'vitest'
import { RECORD_FIXTURES, writeAgentFixtures } from './agents/fixtures.ts'
import { summaryPrefixShares } from './agents/prefix-share.ts'
import { QWEN_CONTEXT_WINDOW, qwenCodeSpec } from './agents/qwen-code.ts'
import { describeRun, runAgent } from './agents/run-agent.ts'
import { FINAL_TEXT } from './agents/task.ts'

const spec = qwenCodeSpec(false)

// Heavy set: installs @qwen-code/qwen-code from npm once (into ~/.cache/warmfold-agents) and runs it as a process.
describe(`Qwen Code ${spec.version} against the scripted Chat Completions upstream, cache sharing off (enableCacheControl: false)`, () => {
  it('finishes its task, compacts on the way, and its summary requests are cold', { timeout: 300_000 }, async () => {
    const run = await runAgent(spec)
    const context = `exit ${run.exitCode}, stderr: ${run.stderr.slice(-1500)}`
    expect(run.timedOut, context).toBe(false)
    expect(run.exitCode, context).toBe(0)
    expect(run.stdout).toContain(FINAL_TEXT)
    const kinds = run.requests.map((entry) => entry.kind)
    // The dedicated summarizer keeps the recent tool results, so a second compaction may follow the first.
    expect(kinds.filter((kind) => kind === 'summary').length).toBeGreaterThanOrEqual(1)
    // After the summary the agent goes on with its task: the final answer comes from a conversation request.
    expect(kinds.lastIndexOf('conversation')).toBeGreaterThan(kinds.indexOf('summary'))
    const shares = summaryPrefixShares(run.requests, 'openai-chat')
    // The cold shape: the compression prompt replaces the system prompt and the tools are dropped, so the
    // summary request shares nothing with the request before it in render order (tools come first).
    for (const share of shares) expect(share.share).toBeLessThan(0.05)
    for (const entry of run.requests.filter((request) => request.kind === 'summary'))
      expect((entry.request.json as Record<string, unknown>).tools).toBeUndefined()
    console.log(describeRun(run))
    if (RECORD_FIXTURES)
      writeAgentFixtures(spec, run, [
        `Settings: \`~/.qwen/settings.json\` sets \`model.generationConfig.contextWindowSize\` to ${QWEN_CONTEXT_WINDOW}`,
        '(auto-compaction at window − 33,000 = 22,000 tokens), background memory, follow-up suggestions, telemetry',
        'and update checks off; `model.generationConfig.enableCacheControl: false` turns its cache-sharing',
        'compaction request off, so it sends the dedicated summarizer request. The scripted server reports usage',
        'as body characters / 4.',
        `${describeRun(run)}.`,
        `Summary prefix share of the request before it: ${JSON.stringify(shares)}.`,
      ])
  })
})
