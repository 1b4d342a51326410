import { describe, expect, it } from 'vitest'
import { RECORD_FIXTURES, writeAgentFixtures } from './agents/fixtures.ts'
import { GEMINI_COMPRESSION_THRESHOLD, geminiCli } from './agents/gemini-cli.ts'
import { summaryPrefixShares } from './agents/prefix-share.ts'
import { describeRun, runAgent } from './agents/run-agent.ts'
import { FINAL_TEXT } from './agents/task.ts'

// Heavy set: installs @google/gemini-cli from npm once (into ~/.cache/warmfold-agents) and runs it as a process.
describe(`Gemini CLI ${geminiCli.version} against the scripted Gemini upstream`, () => {
  it(
    'finishes its task, compresses once (summary and verification calls), both cold',
    { timeout: 300_000 },
    async () => {
      const run = await runAgent(geminiCli)
      const context = `exit ${run.exitCode}, stderr: ${run.stderr.slice(-1500)}`
      expect(run.timedOut, context).toBe(false)
      expect(run.exitCode, context).toBe(0)
      expect(run.stdout).toContain(FINAL_TEXT)
      const kinds = run.requests.map((entry) => entry.kind)
      const summaries = run.requests.filter((entry) => entry.kind === 'summary')
      // The summary call, then the verification call ("Critically evaluate the <state_snapshot> …").
      expect(summaries).toHaveLength(2)
      expect(summaries[0]?.request.body).toContain('Generate a new <state_snapshot>')
      expect(summaries[1]?.request.body).toContain('Critically evaluate the <state_snapshot>')
      expect(kinds.lastIndexOf('conversation')).toBeGreaterThan(kinds.lastIndexOf('summary'))
      const shares = summaryPrefixShares(run.requests, 'gemini')
      // The replaced-system shape: the compression prompt replaces the system instruction and the tools are
      // dropped, so neither call shares anything with the conversation request before it in render order.
      expect(shares).toHaveLength(2)
      for (const share of shares) expect(share.share).toBeLessThan(0.05)
      console.log(describeRun(run))
      if (RECORD_FIXTURES)
        writeAgentFixtures(geminiCli, run, [
          `Settings: \`~/.gemini/settings.json\` sets \`model.compressionThreshold\` to ${GEMINI_COMPRESSION_THRESHOLD}`,
          '(of the 1,048,576-token limit every model gets: about 15,700 tokens), API-key auth, telemetry, usage',
          'statistics and update checks off; `GOOGLE_GEMINI_BASE_URL` points at the server, `GEMINI_API_KEY` is a',
          'dummy. Gemini CLI compresses only at a user message that is not a tool result, so the scripted model',
          'answers with text after two `cat`s; the next-speaker check (the `side` request, on another model) is',
          'answered `model`, and the CLI sends "Please continue.", compressing the history first: the summary',
          'call, then the verification call. The scripted server reports usage as body characters / 4.',
          `${describeRun(run)}.`,
          `Summary prefix share of the request before it: ${JSON.stringify(shares)}.`,
        ])
    },
  )
})
