import { describe, expect, it } from 'vitest'
import { RECORD_FIXTURES, writeAgentFixtures } from './agents/fixtures.ts'
import { GEMINI_COMPRESSION_THRESHOLD, geminiCli } from './agents/gemini-cli.ts'
import { describeRun } from './agents/run-agent.ts'
import type { ProxiedRun } from './agents/through-proxy.ts'
import { describeShares, expectPassedThrough, runThroughProxy } from './agents/through-proxy.ts'

/** The checks of both modes: one compression (the summary call, then the verification call). */
function expectCompression(proxied: ProxiedRun) {
  const { run } = proxied
  const { shares } = expectPassedThrough(proxied, 'gemini', 'rewritten')
  const kinds = run.requests.map((entry) => entry.kind)
  const summaries = run.requests.filter((entry) => entry.kind === 'summary')
  // The summary call, then the verification call ("Critically evaluate the <state_snapshot> …").
  expect(summaries).toHaveLength(2)
  expect(summaries[0]?.request.body).toContain('Generate a new <state_snapshot>')
  expect(summaries[1]?.request.body).toContain('Critically evaluate the <state_snapshot>')
  expect(kinds.lastIndexOf('conversation')).toBeGreaterThan(kinds.lastIndexOf('summary'))
  expect(shares).toHaveLength(2)
  console.log(`${describeRun(run)}\n${describeShares(proxied, shares)}`)
  return shares
}

// Heavy set: installs @google/gemini-cli from npm once (into ~/.cache/warmfold-agents) and runs it as a process,
// twice, through a real WarmfoldProxy in front of the scripted upstream: warm summaries off, then on.
describe(`Gemini CLI ${geminiCli.version} through warmfold proxy to the scripted Gemini upstream`, () => {
  it(
    'warm summaries off: finishes its task, compresses once, every request forwarded byte for byte, both calls cold',
    {
      timeout: 300_000,
    },
    async () => {
      const proxied = await runThroughProxy(geminiCli, 'off')
      const shares = expectCompression(proxied)
      // The replaced-system shape: the compression prompt replaces the system instruction and the tools are
      // dropped, so neither call shares anything with the conversation request before it in render order.
      for (const share of shares) expect(share.share).toBeLessThan(0.05)
      if (RECORD_FIXTURES)
        writeAgentFixtures(geminiCli, proxied.run, [
          `Settings: \`~/.gemini/settings.json\` sets \`model.compressionThreshold\` to ${GEMINI_COMPRESSION_THRESHOLD}`,
          '(of the 1,048,576-token limit every model gets: about 15,700 tokens), API-key auth, telemetry, usage',
          'statistics and update checks off; `GOOGLE_GEMINI_BASE_URL` points at the server, `GEMINI_API_KEY` is a',
          'dummy. Gemini CLI compresses only at a user message that is not a tool result, so the scripted model',
          'answers with text after two `cat`s; the next-speaker check (the `side` request, on another model) is',
          'answered `model`, and the CLI sends "Please continue.", compressing the history first: the summary',
          'call, then the verification call. The scripted server reports usage as body characters / 4. Recorded',
          'through `warmfold proxy` with warm summaries off (byte for byte).',
          `${describeRun(proxied.run)}.`,
          `Summary prefix share of the request before it: ${JSON.stringify(shares)}.`,
        ])
    },
  )

  it(
    'warm summaries on: finishes its task, and both calls the upstream gets are warm',
    {
      timeout: 300_000,
    },
    async () => {
      const shares = expectCompression(await runThroughProxy(geminiCli, 'on'))
      // The rewrite replays the conversation request whole (its system instruction and tools too); the
      // verification call extends the rewritten summary call with the model's snapshot and its instruction.
      for (const share of shares) expect(share.share).toBeGreaterThanOrEqual(0.98)
    },
  )
})
