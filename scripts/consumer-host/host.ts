/**
 * A host application as a new user writes it from the READMEs, built against the packed
 * tarballs installed with npm (see scripts/consumer-test.ts, which typechecks it with
 * `tsc --strict --module nodenext` and runs it). It mounts every runtime plugin, runs a
 * scripted session through a compaction, swaps in a contract-only engine and checks it is
 * triggered. Prints one line per check; exits 1 when any fails.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { Context } from '@cordisjs/core'
import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { CacheLedger } from '@warmfold/cache-ledger'
import { CompactionInvariants } from '@warmfold/compaction'
import { BasicCompactionEngine } from '@warmfold/compaction-basic'
import { ToolResultPruner } from '@warmfold/compaction-tool-result-pruner'
import type { GenerateOptions } from '@warmfold/llm'
import {
  assertPluginsLoaded,
  createUserMessage,
  LlmRuntime,
  PluginLoadError,
  textBlock,
  textOf,
  toolCallBlock,
} from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { AiSdkAdapter } from '@warmfold/llm-ai-sdk'
import { AnthropicAdapter } from '@warmfold/llm-anthropic'
import { GoogleAdapter } from '@warmfold/llm-google'
import { OpenAICompatibleAdapter } from '@warmfold/llm-openai-compatible'
import { OpenAIResponsesAdapter } from '@warmfold/llm-openai-responses'
import { PrefixCacheService } from '@warmfold/prefix-cache-testkit'
import { SessionStore } from '@warmfold/session'
import { TokenMeter } from '@warmfold/token-meter'
import Schema from 'schemastery'
import { ContractOnlyEngine, contractOnlyCalls } from './contract-only-engine.js'
import { checkSqlStores } from './sql-stores.js'
import { CACHED, startWireServer } from './wire-server.js'

const failures: string[] = []
function check(name: string, ok: boolean, detail = ''): void {
  console.log(`host: ${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? ` (${detail})` : ''}`)
  if (!ok) failures.push(name)
}

/** Deterministic text of `length` characters for step `step`. */
function filler(step: number, length: number): string {
  let text = ''
  let state = (step + 1) * 2654435761
  while (text.length < length) {
    state = (state * 1103515245 + 12345) % 2147483648
    text += `${state.toString(36)} `
  }
  return text.slice(0, length)
}

// Every provider adapter, each called once over real HTTP (a 127.0.0.1 server speaking its wire
// format) with the SDK versions npm installed for this host, in a context of their own: these
// calls belong to no session, and the session checks below count requests.
const wire = await startWireServer()
const wireCtx = new Context()
await wireCtx.start()
wireCtx.plugin(LlmRuntime)
wireCtx.plugin(OpenAICompatibleAdapter, {
  provider: 'deepseek',
  baseURL: `${wire.origin}/v1`,
  apiKey: 'sk-unused',
  dialect: 'deepseek',
  models: { 'deepseek-chat': { contextWindow: 65536, defaultMaxTokens: 8192 } },
})
wireCtx.plugin(OpenAIResponsesAdapter, {
  provider: 'openai',
  baseURL: `${wire.origin}/v1`,
  apiKey: 'sk-unused',
  models: { 'gpt-5.5': { contextWindow: 400_000 } },
})
wireCtx.plugin(AnthropicAdapter, {
  baseURL: wire.origin,
  apiKey: 'sk-ant-unused',
  models: { 'claude-sonnet-4-5': { contextWindow: 200_000, defaultMaxTokens: 32_000 } },
})
wireCtx.plugin(GoogleAdapter, {
  baseURL: wire.origin,
  apiKey: 'gemini-unused',
  models: { 'gemini-2.5-flash': { contextWindow: 1_048_576 } },
})
const local = createOpenAICompatible({ name: 'local', baseURL: `${wire.origin}/v1`, includeUsage: true })
wireCtx.plugin(AiSdkAdapter, {
  provider: 'ai-sdk',
  models: { main: { model: local('local-model'), contextWindow: 65536, cache: 'openai-compatible' } },
})
const routes = [
  ['deepseek', 'deepseek-chat'],
  ['openai', 'gpt-5.5'],
  ['anthropic', 'claude-sonnet-4-5'],
  ['google', 'gemini-2.5-flash'],
  ['ai-sdk', 'main'],
] as const
for (const [provider, model] of routes) {
  const result = await wireCtx.llm.generate({
    provider,
    model,
    system: 'You are terse.',
    messages: [createUserMessage('Say ok.')],
  })
  check(
    `${provider} adapter streams over HTTP and reports cached tokens`,
    textOf(result.content) === 'ok' && result.usage?.cacheReadTokens === CACHED,
    `text ${JSON.stringify(textOf(result.content))}, usage ${JSON.stringify({ ...result.usage, raw: undefined })}`,
  )
}
await wireCtx.stop()
await wire.close()

// The SQL stores: SQLite's native engine comes from the npm registry alone; the PostgreSQL
// server is the one the consumer test started (its URL in WARMFOLD_CONSUMER_POSTGRES_URL).
const postgresUrl = process.env.WARMFOLD_CONSUMER_POSTGRES_URL
if (!postgresUrl)
  throw new Error(
    'WARMFOLD_CONSUMER_POSTGRES_URL is not set: the consumer test starts a PostgreSQL server and passes its URL',
  )
const sqlDirectory = await mkdtemp(join(process.cwd(), 'sqlite-'))
await checkSqlStores(check, join(sqlDirectory, 'sessions.db'), postgresUrl)
await rm(sqlDirectory, { recursive: true, force: true })

// Inside the host project, so the consumer test's cleanup removes it even when this host crashes.
const directory = await mkdtemp(join(process.cwd(), 'sessions-'))
const ctx = new Context()
const problems: string[] = []
ctx.on('internal/warning', (...args: unknown[]) => void problems.push(`warning: ${args.map(String).join(' ')}`))
ctx.on(
  'internal/error',
  (...args: unknown[]) =>
    void problems.push(`error: ${args.map((arg) => (arg instanceof Error ? arg.stack : String(arg))).join(' ')}`),
)
await ctx.start()

ctx.plugin(LlmRuntime)
ctx.plugin(SessionStore, { store: 'file', directory })
ctx.plugin(CacheLedger, { guard: 'refuse' })
ctx.plugin(ToolRegistry)
ctx.plugin(AgentLoop)
ctx.plugin(TokenMeter, {})
ctx.plugin(CompactionInvariants)
ctx.plugin(ToolResultPruner, { thresholdChars: 4000, headChars: 1000, tailChars: 1000 })
const basicEngine = ctx.plugin(BasicCompactionEngine, {})
ctx.plugin(PrefixCacheService, { profile: 'bytes' })

let conversationSteps = 0
let turnSteps = 30
const requests: GenerateOptions[] = []
ctx.on('llm/stream', (request) => void requests.push(request))
ctx.llm.registerAdapter(
  'scripted',
  new ScriptedAdapter({
    models: {
      main: {
        contextWindow: 8000,
        defaultMaxTokens: 500,
        reasoning: { efforts: ['low', 'high'], defaultEffort: 'high' },
      },
    },
    responses: (request) => {
      if (request.purpose === 'compaction')
        return { content: 'Goal: refactor the project. Files read: src/file-*.ts. Next: keep reading.' }
      const index = conversationSteps++
      if (--turnSteps < 0) return { content: 'All done.' }
      return {
        content: [
          textBlock(`Step ${index}: reading the next file. ${filler(index, 80)}`),
          toolCallBlock(`call-${index}`, 'read', `{"path":"src/file-${index}.ts"}`),
        ],
      }
    },
  }),
)
let reads = 0
ctx.tools.register({
  name: 'read',
  description: 'Read a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  execute: () => filler(1000 + reads++, 1200),
})

const agent = await ctx.agentLoop.create('host-session', {
  provider: 'scripted',
  model: 'main',
  system: 'You are a coding agent.',
})
agent.followup('Refactor the project.')
await agent.whenIdle()
const summaries = agent.session.events.filter((event) => event.type === 'compaction/summary').length
check(
  'a 30-step scripted turn compacts with BasicCompactionEngine',
  summaries >= 1,
  `${summaries} compaction/summary event(s), ${requests.length} requests`,
)
check(
  'the session is in the file store',
  (await readdir(directory)).some((file) => file.includes('host-session')),
  `files: ${(await readdir(directory)).join(', ')}`,
)
check(
  'PrefixCacheService observed the requests',
  ctx.prefixCache.totals().requests === requests.length,
  `${ctx.prefixCache.totals().requests} observed`,
)
const ledger = ctx.cacheLedger.totals(agent.session)
check(
  'CacheLedger logged one cache/observation per request, the folds among the breaks, no guard event for the warm summary calls',
  ledger.requests === requests.length &&
    (ledger.breaks.fold ?? 0) >= 1 &&
    ledger.guardWarnings + ledger.guardRefusals === 0,
  JSON.stringify(ledger),
)

// Swap the engine: the contract-only one must be triggered by the loop like the basic one.
basicEngine.dispose()
ctx.plugin(ContractOnlyEngine, {})
turnSteps = 5
agent.followup('Continue.')
await agent.whenIdle()
const pressure = contractOnlyCalls.filter((call) => call.trigger === 'pressure').length
check(
  'a contract-only engine swapped in is triggered during a turn',
  pressure >= 1,
  `${pressure} compactIfNeeded(agent, 'pressure') call(s) in a 5-step turn`,
)

// Config schemas are built with the host's own schemastery (a peer), so a host composes them into its own.
const hostSchema = Schema.object({ sessions: SessionStore.Config.schema, tokenMeter: TokenMeter.Config.schema })
const hostConfig = hostSchema({ sessions: { store: 'file', directory } })
check(
  "the plugins' Config schemas compose with the host's schemastery",
  hostConfig.sessions.store === 'file' && hostConfig.sessions.directory === directory,
  JSON.stringify(hostConfig),
)

// A bad config is refused at mount, naming the plugin.
const refused = new Context()
const refusals: string[] = []
refused.on(
  'internal/error',
  (...args: unknown[]) =>
    void refusals.push(args.map((arg) => (arg instanceof Error ? arg.message : String(arg))).join(' ')),
)
await refused.start()
// cordis parses a config inside ctx.plugin and reports a refusal there, synchronously.
refused.plugin(SessionStore, { store: 'disk' } as unknown as SessionStore.Config)
refused.plugin(TokenMeter, { tokenizr: () => 1 } as unknown as TokenMeter.Config)
check(
  'a bad config fails at mount, naming the plugin',
  refusals.some((message) => message.includes('SessionStore config:')) &&
    refusals.some((message) => message.includes('TokenMeter config: unknown key "tokenizr"')),
  refusals.join(' | '),
)
// The start-up check a host runs: every failed plugin, by package, and an agent loop that refuses the broken stack.
const loadFailure = await assertPluginsLoaded(refused).then(
  () => undefined,
  (error: unknown) => error,
)
check(
  'assertPluginsLoaded names each failed plugin by package',
  PluginLoadError.isInstance(loadFailure) &&
    loadFailure.failures.map((failure) => failure.warmfold?.packageName).join() ===
      '@warmfold/session,@warmfold/token-meter',
  String(loadFailure),
)
await refused.stop()

// Typed configs, as a host's compiler sees them from the packed .d.ts files (this block never runs;
// the tsc step above fails when a typo compiles).
function typedConfigs(host: Context): void {
  // @ts-expect-error a typo next to a valid key
  host.plugin(BasicCompactionEngine, { thresholdRation: 0.5, auto: true })
  // @ts-expect-error a mistyped value
  host.plugin(AnthropicAdapter, { baseURL: 42 })
  // @ts-expect-error a typo
  host.plugin(OpenAICompatibleAdapter, { provider: 'p', baseURL: 'http://127.0.0.1:1', models: {}, maxRetry: 1 })
  host.plugin(BasicCompactionEngine, { thresholdRatio: 0.5 })
}
void typedConfigs

// ESM only, as the READMEs say: require() is refused by the exports map.
const require = createRequire(import.meta.url)
let requireCode: string
try {
  const loaded: unknown = require('@warmfold/llm')
  requireCode = `none: require() returned ${typeof loaded}`
} catch (error) {
  requireCode = String((error as NodeJS.ErrnoException).code)
}
check(
  'require() of a warmfold package fails as documented (ESM only)',
  requireCode === 'ERR_PACKAGE_PATH_NOT_EXPORTED',
  `code ${requireCode}`,
)

check('no cordis internal warning or error', problems.length === 0, problems.join('; '))
await ctx.stop()
await rm(directory, { recursive: true, force: true })
if (failures.length) {
  console.log(`host: ${failures.length} check(s) failed: ${failures.join('; ')}`)
  process.exitCode = 1
}
