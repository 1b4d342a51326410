import { describe, expect, it } from 'vitest'
import { RECORD_FIXTURES, writeAgentFixtures } from './agents/fixtures.ts'
import { OPENCODE_CONTEXT, OPENCODE_OUTPUT, opencode } from './agents/opencode.ts'
import { describeRun } from './agents/run-agent.ts'
import { describeSummarizerView, summarizerView } from './agents/summarizer-view.ts'
import type { ProxiedRun } from './agents/through-proxy.ts'
import { describeShares, expectPassedThrough, runThroughProxy } from './agents/through-proxy.ts'

/** The checks of both modes; returns the summary requests' prefix shares and what their summarizer saw. */
function expectCompacted(proxied: ProxiedRun) {
  const { run } = proxied
  const { shares } = expectPassedThrough(proxied, 'openai-chat', 'rewritten')
  const kinds = run.requests.map((entry) => entry.kind)
  // After the summary the agent goes on (opencode continues its turn) and answers from a conversation request.
  expect(kinds.lastIndexOf('conversation'), kinds.join(' ')).toBeGreaterThan(kinds.indexOf('summary'))
  const summaries = run.requests.filter((entry) => entry.kind === 'summary')
  const views = summaries.map((entry) => summarizerView(entry.request))
  const lines = summaries.map((entry, index) => describeSummarizerView(proxied.mode, entry.index, views[index]!))
  console.log(`${describeRun(run)}\n${describeShares(proxied, shares)}\n${lines.join('\n')}`)
  return { shares, views }
}

// Heavy set: installs opencode-ai from npm once (into ~/.cache/warmfold-agents) and runs it as a
// process, twice, through a real WarmfoldProxy in front of the scripted upstream: warm summaries off, then on.
describe(`opencode ${opencode.version} through warmfold proxy to the scripted Chat Completions upstream`, () => {
  it(
    'warm summaries off: finishes its task, its transcript summary requests forwarded byte for byte, cold',
    { timeout: 300_000 },
    async () => {
      const proxied = await runThroughProxy(opencode, 'off')
      const { shares, views } = expectCompacted(proxied)
      // The cold shape: its own system prompt, no tools, the history as one text transcript (tool results cut).
      for (const share of shares) expect(share.share).toBeLessThan(0.05)
      for (const view of views) {
        expect(view.toolMessageChars).toBe(0)
        expect(view.transcriptToolChars).toBeGreaterThan(0)
      }
      if (RECORD_FIXTURES)
        writeAgentFixtures(opencode, proxied.run, [
          'Settings: `~/.config/opencode/opencode.json` with a custom provider `scripted` (`npm:',
          '@ai-sdk/openai-compatible`, `options.baseURL`), model `scripted/scripted-model` (also the small model) with',
          `\`limit.context\` ${OPENCODE_CONTEXT} and \`limit.output\` ${OPENCODE_OUTPUT}, bash/edit/read allowed, autoupdate and`,
          'sharing off; `OPENCODE_DISABLE_MODELS_FETCH`, `OPENCODE_DISABLE_DEFAULT_PLUGINS`, `OPENCODE_PURE` and the other',
          'startup downloads off (see `test/agents/opencode.ts`); `opencode run`. The scripted server reports usage as',
          'body characters / 4. Recorded through `warmfold proxy` with warm summaries off (byte for byte).',
          `${describeRun(proxied.run)}.`,
          `Summary prefix share of the request before it: ${JSON.stringify(shares)}.`,
          `What the summarizer saw: ${JSON.stringify(views)}.`,
        ])
    },
  )

  it(
    'warm summaries on: finishes its task, and each summary request replays the held history warm',
    { timeout: 300_000 },
    async () => {
      const proxied = await runThroughProxy(opencode, 'on')
      const { shares, views } = expectCompacted(proxied)
      expect(shares.length).toBeGreaterThan(0)
      for (const share of shares) expect(share.share).toBeGreaterThanOrEqual(0.98)
      // The replay shows the summarizer the tool outputs whole, as tool messages, in place of the transcript.
      for (const view of views) {
        expect(view.transcriptToolChars).toBe(0)
        expect(view.toolMessageChars).toBeGreaterThan(0)
      }
    },
  )
})
