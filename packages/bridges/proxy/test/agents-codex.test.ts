import { describe, expect, it } from 'vitest'
import { RECORD_FIXTURES, writeAgentFixtures } from './agents/fixtures.ts'
import { summaryPrefixShares } from './agents/prefix-share.ts'
import { CODEX_AUTO_COMPACT_LIMIT, CODEX_CONTEXT_WINDOW, codex } from './agents/codex.ts'
import { describeRun, runAgent } from './agents/run-agent.ts'
import { FINAL_TEXT } from './agents/task.ts'

// Heavy set: installs @openai/codex from npm once (into ~/.cache/warmfold-agents) and runs it as a process.
describe(`Codex ${codex.version} against the scripted Responses upstream`, () => {
  it('finishes its task, compacts once on the way, and its summary request is cold', { timeout: 300_000 }, async () => {
    const run = await runAgent(codex)
    const context = `exit ${run.exitCode}, stderr: ${run.stderr.slice(-1500)}`
    expect(run.timedOut, context).toBe(false)
    expect(run.exitCode, context).toBe(0)
    expect(run.stdout).toContain(FINAL_TEXT)
    const kinds = run.requests.map((entry) => entry.kind)
    expect(kinds.filter((kind) => kind === 'summary')).toHaveLength(1)
    // After the summary the agent goes on with its task: the final answer comes from a conversation request.
    expect(kinds.lastIndexOf('conversation')).toBeGreaterThan(kinds.indexOf('summary'))
    const shares = summaryPrefixShares(run.requests, 'openai-responses')
    // The cold shape: the compaction request replays the history and appends the checkpoint prompt, but sends
    // `tools: []` (and `parallel_tool_calls: false`), so in render order (tools first) it shares nothing.
    expect(shares[0]?.share).toBeLessThan(0.05)
    const summary = run.requests.find((entry) => entry.kind === 'summary')?.request.json as Record<string, unknown>
    expect(summary.tools).toEqual([])
    console.log(describeRun(run))
    if (RECORD_FIXTURES)
      writeAgentFixtures(codex, run, [
        `Settings: \`$CODEX_HOME/config.toml\` (CODEX_HOME=$HOME/.codex) with a custom \`[model_providers.scripted]\``,
        '(`base_url`, `env_key`, `wire_api = "responses"`, no retries), `model_context_window = ' +
          `${CODEX_CONTEXT_WINDOW}\`, \`model_auto_compact_token_limit = ${CODEX_AUTO_COMPACT_LIMIT}\`, approval`,
        '`never`, sandbox `danger-full-access`, analytics and update checks off. The scripted server reports usage',
        'as body characters / 4.',
        `${describeRun(run)}.`,
        `Summary prefix share of the request before it: ${JSON.stringify(shares)}.`,
      ])
  })
})
