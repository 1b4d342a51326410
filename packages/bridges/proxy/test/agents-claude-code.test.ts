import { describe, expect, it } from 'vitest'
import { CLAUDE_COMPACT_PCT, CLAUDE_COMPACT_WINDOW, claudeCode } from './agents/claude-code.ts'
import { RECORD_FIXTURES, writeAgentFixtures } from './agents/fixtures.ts'
import { summaryPrefixShares } from './agents/prefix-share.ts'
import { describeRun, runAgent } from './agents/run-agent.ts'
import { FINAL_TEXT } from './agents/task.ts'

// Heavy set: installs @anthropic-ai/claude-code from npm once (into ~/.cache/warmfold-agents) and runs it as a process.
describe(`Claude Code ${claudeCode.version} against the scripted Anthropic Messages upstream`, () => {
  it('finishes its task, compacts once, and its summary request is already warm', { timeout: 300_000 }, async () => {
    const run = await runAgent(claudeCode)
    const context = `exit ${run.exitCode}, stderr: ${run.stderr.slice(-1500)}`
    expect(run.timedOut, context).toBe(false)
    expect(run.exitCode, context).toBe(0)
    expect(run.stdout).toContain(FINAL_TEXT)
    const kinds = run.requests.map((entry) => entry.kind)
    expect(kinds.filter((kind) => kind === 'summary')).toHaveLength(1)
    expect(kinds.lastIndexOf('conversation')).toBeGreaterThan(kinds.indexOf('summary'))
    const shares = summaryPrefixShares(run.requests, 'anthropic-messages')
    // The warm shape: same tools and system, the history replayed, the summary instruction appended.
    expect(shares[0]?.share).toBeGreaterThan(0.98)
    console.log(describeRun(run))
    if (RECORD_FIXTURES)
      writeAgentFixtures(claudeCode, run, [
        `Environment: \`ANTHROPIC_BASE_URL\`, a dummy \`ANTHROPIC_API_KEY\`, \`CLAUDE_CODE_AUTO_COMPACT_WINDOW=${CLAUDE_COMPACT_WINDOW}\``,
        `(its minimum) and \`CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=${CLAUDE_COMPACT_PCT}\` (auto-compaction at about 30,000`,
        'tokens), non-essential traffic, telemetry, error reporting and the auto-updater off; `--allowedTools Bash`.',
        'The scripted server reports usage as body characters / 4 and answers `count_tokens` the same way.',
        `${describeRun(run)}.`,
        `Summary prefix share of the request before it: ${JSON.stringify(shares)}.`,
      ])
  })
})
