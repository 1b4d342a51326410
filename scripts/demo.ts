/**
 * A short scripted demo: a tool-using conversation run through the real agent loop, `ctx.llm`
 * runtime, token meter and compaction engine (only the model's replies are scripted), at a
 * 3,600-token window so a background compaction folds the early history mid-turn. Every request is
 * printed with what it keeps of the previous one; the summary call is shown replaying the
 * conversation as its prefix. The session is logged to the JSONL file store, then reopened in a
 * fresh Context and checked byte for byte. The cache ledger logs a `cache/observation` per
 * request, with what the test kit's prefix-cache simulator charged it as the provider's usage (the
 * scripted model reports none), so `warmfold report` on the log shows real cache numbers.
 *
 * `pnpm demo [folder]`: the log goes to `folder` (kept), else to a temporary folder that is
 * removed when the demo ends, also on an error or Ctrl-C. `pnpm demo --store sqlite:PATH` (or
 * `postgres:URL`, `file:DIR`) keeps the session, as `demo`, in that store instead.
 */
import { join } from 'node:path'
import { Context } from '@cordisjs/core'
import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import type { GenerateOptions, Message } from '@warmfold/llm'
import { canonicalJson, LlmRuntime, promptView, textBlock, toolCallBlock } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { BasicCompactionEngine, COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import { backendFactory, describeStore, parseStoreSpec, refuseHeldIds, UsageError } from '@warmfold/cli'
import type { SessionBackend, SessionStore as SessionStoreType } from '@warmfold/session'
import { SessionStore } from '@warmfold/session'
import { TokenMeter } from '@warmfold/token-meter'
import { CacheLedger } from '@warmfold/cache-ledger'
import type { CacheObservation } from '@warmfold/prefix-cache-testkit'
import { PrefixCacheService, tokensOf } from '@warmfold/prefix-cache-testkit'
import { demoFolder } from './demo-folder.ts'

const { folder, store: storeText } = demoArgs(process.argv.slice(2))
const spec = storeText === undefined ? undefined : parseStoreSpec('--store', storeText)
const { directory, temporary } = await demoFolder(spec?.kind === 'file' ? spec.directory : folder)
/** A fresh `store` for each Context: the file store in `directory`, or a new backend of the SQL store. */
const newStore: () => SessionStoreType.Config['store'] =
  spec && spec.kind !== 'file' ? await backendFactory(spec) : () => 'file'
const where = spec && spec.kind !== 'file' ? `session demo in ${describeStore(spec)}` : join(directory, 'demo.jsonl')
if (spec && spec.kind !== 'file') {
  // Before anything runs: an unreachable store, or one that holds an earlier demo's session, is refused in one line.
  try {
    await refuseHeldIds(spec, newStore() as SessionBackend, ['demo'])
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    console.error(`pnpm demo: ${error.message}`)
    process.exit(2)
  }
}
console.log(
  spec && spec.kind !== 'file'
    ? `session store: ${describeStore(spec)}\n`
    : `session log: ${where}${temporary ? ' (a temporary folder, removed when the demo ends; `pnpm demo FOLDER` keeps it)' : ''}\n`,
)

/** `[folder] [--store SPEC]`, in any order. */
function demoArgs(argv: readonly string[]): { folder?: string; store?: string } {
  const parsed: { folder?: string; store?: string } = {}
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] as string
    if (arg === '--') continue
    if (arg === '--store') {
      const value = argv[++index]
      if (value === undefined)
        throw new TypeError('pnpm demo: --store needs a value: file:DIR | sqlite:PATH | postgres:URL')
      parsed.store = value
    } else if (arg.startsWith('--store=')) parsed.store = arg.slice('--store='.length)
    else if (arg.startsWith('--'))
      throw new TypeError(
        `pnpm demo: unknown flag ${JSON.stringify(arg)}; usage: pnpm demo [FOLDER] [--store file:DIR | sqlite:PATH | postgres:URL]`,
      )
    else parsed.folder = arg
  }
  return parsed
}

const CASES = Array.from({ length: 24 }, (_, index) => [index + 1, (index * 7) % 11] as const)

/** The test run as vitest's default reporter prints it: a line per passing file, every failure in detail. */
function testLog(): string {
  const add = files['src/add.ts']!.includes('a + b') ? (a: number, b: number) => a + b : (a: number, b: number) => a - b
  const testLines = files['test/add.test.ts']!.split('\n')
  const failures = CASES.map(([a, b], index) => ({ a, b, line: index + 4 })).filter(({ a, b }) => add(a, b) !== a + b)
  const details = failures.flatMap(({ a, b, line }) => [
    ` FAIL  test/add.test.ts > adds ${a} and ${b}`,
    `AssertionError: expected ${add(a, b)} to be ${a + b} // Object.is equality`,
    '- Expected',
    '+ Received',
    `- ${a + b}`,
    `+ ${add(a, b)}`,
    ` ❯ test/add.test.ts:${line}:${testLines[line - 1]!.indexOf('.toBe') + 1}`,
    ...[line - 2, line - 1, line].map((number) => `    ${number}| ${testLines[number - 1]}`),
    '',
  ])
  return [
    ...['sub', 'mul', 'div', 'mod'].map((name) => ` ✓ test/${name}.test.ts (24 tests) 4ms`),
    failures.length
      ? ` ❯ test/add.test.ts (24 tests | ${failures.length} failed) 6ms`
      : ' ✓ test/add.test.ts (24 tests) 3ms',
    '',
    ...details,
    ` Test Files  ${failures.length ? '1 failed | 4 passed' : '5 passed'} (5)`,
    `      Tests  ${failures.length ? `${failures.length} failed | ${120 - failures.length} passed` : '120 passed'} (120)`,
  ].join('\n')
}

const files: Record<string, string> = {
  'src/add.ts': [
    '/**',
    ' * Arithmetic helpers of the calculator: each one takes two finite numbers and returns a finite',
    ' * number, never throws, and never rounds (callers format the result). The test suite checks each',
    ' * helper against the operator it wraps on a table of small integers, so a wrong operator fails',
    ' * every case whose second operand is not zero.',
    ' *',
    ' * Keep these helpers free of validation: the parser rejects non-numeric input before it reaches',
    ' * them, and the display layer decides how many digits to show. A helper that rounded or clamped',
    ' * would hide the very mistakes the table of cases is there to catch, and the calculator would',
    ' * show a plausible but wrong total instead of failing a test.',
    ' */',
    '',
    '/**',
    ' * Adds two numbers.',
    ' * @param a the first addend',
    ' * @param b the second addend',
    ' * @returns their sum',
    ' */',
    'export const add = (a: number, b: number): number => a - b',
    '',
  ].join('\n'),
  'test/add.test.ts': [
    "import { expect, it } from 'vitest'",
    "import { add } from '../src/add.ts'",
    '',
    ...CASES.map(([a, b]) => `it('adds ${a} and ${b}', () => expect(add(${a}, ${b})).toBe(${a + b}))`),
    '',
  ].join('\n'),
}
const script = [
  { content: [textBlock('Let me run the tests first.'), toolCallBlock('call-1', 'run_tests', '{}')] },
  {
    content: [
      textBlock('The add cases fail. Let me read the test.'),
      toolCallBlock('call-2', 'read', '{"path":"test/add.test.ts"}'),
    ],
  },
  { content: [textBlock('Now the source.'), toolCallBlock('call-3', 'read', '{"path":"src/add.ts"}')] },
  {
    content: [
      textBlock('The operator is wrong.'),
      toolCallBlock(
        'call-4',
        'write',
        JSON.stringify({ path: 'src/add.ts', text: files['src/add.ts']!.replace('a - b', 'a + b') }),
      ),
    ],
  },
  { content: [textBlock('Running the tests again.'), toolCallBlock('call-5', 'run_tests', '{}')] },
  { content: 'Fixed: `add` subtracted instead of adding; all 120 tests pass.' },
]
const checkpoint =
  '## Goal\n- Make the failing add tests pass.\n## Errors and Fixes\n- 21 of 24 add cases fail: add(a, b) returns a - b (adds 1 and 7: expected 8, got -6).\n## Next Step\n- Read the add test and src/add.ts, fix add, rerun the tests.'

/** The model's window, and the share of it at which the engine compacts (default 0.8; lower here so the fold lands mid-turn). */
const WINDOW = 3600
const THRESHOLD_RATIO = 0.7

const ctx = new Context()
await ctx.start()
// The simulator first: its llm/stream listener charges each request before the demo's own listener records the charge.
ctx.plugin(PrefixCacheService, { profile: 'bytes' })
ctx.plugin(LlmRuntime)
ctx.plugin(SessionStore, { store: newStore(), directory })
ctx.plugin(ToolRegistry)
ctx.plugin(AgentLoop)
ctx.plugin(TokenMeter, {})
/** What the simulator charged each request, and the output tokens of the scripted answer to it. */
const charged = new WeakMap<GenerateOptions, { observation: CacheObservation; outputTokens: number }>()
// The scripted model reports no usage (so the token meter keeps its own estimates, as the demo's
// printout uses them); the ledger logs the simulator's charge as the provider's numbers instead.
ctx.plugin(CacheLedger, {
  estimateUsage: (options: GenerateOptions) => {
    const charge = charged.get(options)
    if (!charge) return undefined
    const { observation, outputTokens } = charge
    return {
      inputTokens: observation.uncachedTokens - observation.cacheWriteTokens,
      cacheReadTokens: observation.cachedTokens,
      cacheWriteTokens: observation.cacheWriteTokens,
      outputTokens,
    }
  },
})
// A fixed soft threshold (0.8 × H), so the fold runs beside the conversation. The default ('adaptive')
// folds this session at H on the turn's path instead: one tool result here is half the window, so its
// forecast cannot promise the summary in hand before H (the same region is folded either way).
ctx.plugin(BasicCompactionEngine, {
  thresholdRatio: THRESHOLD_RATIO,
  retainRatio: 0.16,
  background: { startRatio: 0.8 },
})
let conversationReplies = 0
ctx.llm.registerAdapter(
  'scripted',
  new ScriptedAdapter({
    models: {
      'scripted-model': {
        contextWindow: WINDOW,
        defaultMaxTokens: 256,
        reasoning: { efforts: ['low', 'high', 'max'], defaultEffort: 'high' },
      },
    },
    responses: (request) => {
      const reply =
        request.purpose === 'compaction'
          ? { content: checkpoint }
          : (script[conversationReplies++] ?? { content: 'Done.' })
      const charge = charged.get(request)
      // The simulator's 4 characters a token, over the text and tool calls the model writes.
      if (charge)
        charge.outputTokens = tokensOf(
          typeof reply.content === 'string'
            ? reply.content.length
            : reply.content.reduce(
                (chars, block) =>
                  chars +
                  (block.type === 'text'
                    ? block.text.length
                    : block.type === 'tool-call'
                      ? block.name.length + block.arguments.length
                      : 0),
                0,
              ),
        )
      return reply
    },
  }),
)
ctx.tools.register({
  name: 'run_tests',
  description: 'Run the test suite',
  parameters: { type: 'object', properties: {} },
  execute: () => testLog(),
})
ctx.tools.register({
  name: 'read',
  description: 'Read a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  execute: (args) => files[(args as { path: string }).path] ?? 'no such file',
})
ctx.tools.register({
  name: 'write',
  description: 'Write a file',
  parameters: {
    type: 'object',
    properties: { path: { type: 'string' }, text: { type: 'string' } },
    required: ['path', 'text'],
  },
  execute: (args) => {
    const { path, text } = args as { path: string; text: string }
    files[path] = text
    return `wrote ${text.length} characters to ${path}`
  },
})

/** System prompt, tools, then each message, canonical: what a provider's prefix cache compares. */
function elements(request: GenerateOptions): string[] {
  return [
    canonicalJson(request.system ?? null),
    canonicalJson(request.tools ?? []),
    ...request.messages.map((message) => canonicalJson(promptView(message))),
  ]
}

/** The token meter's estimate of a request's prompt. */
function estimate(request: GenerateOptions): number {
  return (
    ctx.tokenMeter.estimateSystem(request.system) +
    ctx.tokenMeter.estimateTools(request.tools) +
    request.messages.reduce((sum, message) => sum + ctx.tokenMeter.estimateMessage(message), 0)
  )
}

function isPrefix(prefix: readonly string[], of: readonly string[]): boolean {
  return prefix.length <= of.length && prefix.every((element, index) => of[index] === element)
}

function describe(message: Message | undefined): string {
  const text =
    message?.content
      .map((block) =>
        block.type === 'text'
          ? block.text
          : block.type === 'tool-result'
            ? `[tool result: …${block.content
                .map((part) => (part.type === 'text' ? part.text : ''))
                .join('')
                .trim()
                .split('\n')
                .at(-1)
                ?.trim()}]`
            : `[${block.type}]`,
      )
      .join(' ') ?? ''
  return text.length > 90 ? `${text.slice(0, 90)}…` : text
}

/** The last conversation request, and whether a checkpoint landed since (a logged rewrite). */
let previous: GenerateOptions | undefined
let foldedSince = false
ctx.on('llm/stream', (request) => {
  charged.set(request, { observation: ctx.prefixCache.observations.at(-1) as CacheObservation, outputTokens: 0 })
  const sent = elements(request)
  console.log(
    `→ ${request.purpose} request to ${request.provider}/${request.model} effort=${request.reasoningEffort} maxTokens=${request.maxTokens} tools=${request.tools?.map((tool) => tool.name).join(',')}`,
  )
  if (request.purpose === 'compaction') {
    const replayed =
      previous !== undefined &&
      isPrefix(sent.slice(0, -1), elements(previous)) &&
      request.reasoningEffort === previous.reasoningEffort
    console.log(
      `  replays the last conversation request as its prefix: ${replayed ? 'yes' : 'NO'} (same system prompt, tools and effort, its first ${request.messages.length - 1} of ${previous?.messages.length} messages byte for byte, a cache hit)`,
    )
    console.log(
      `  then 1 new message, the instruction (about ${ctx.tokenMeter.estimateMessage(request.messages.at(-1)!)} tokens): "${COMPACTION_INSTRUCTION.slice(0, 60)}…"`,
    )
    return
  }
  const kept =
    previous === undefined
      ? 'first request of the session, nothing cached yet'
      : isPrefix(elements(previous), sent)
        ? 'extends the previous request (a cache hit on all of it): yes'
        : foldedSince
          ? 'extends the previous request: no, the checkpoint replaced its start (a logged rewrite; system prompt and tools still hit)'
          : 'extends the previous request: NO'
  console.log(
    `  ${request.messages.length} message(s), about ${estimate(request)} tokens, ${kept}; last: ${describe(request.messages.at(-1))}`,
  )
  previous = request
  foldedSince = false
})
ctx.on('session/event', (session, event) => {
  if (event.type === 'compaction/start') {
    const threshold = Math.floor(WINDOW * THRESHOLD_RATIO)
    const tokens = ctx.tokenMeter.measure(session).totalTokens
    console.log(
      event.data.trigger === 'background'
        ? `✂ compaction (background): the next request, about ${tokens} tokens, nears the ${threshold}-token threshold (${THRESHOLD_RATIO * 100} % of the ${WINDOW}-token window); its summary call runs beside the conversation and the checkpoint swaps in at a later request boundary`
        : `✂ compaction (${event.data.trigger}): the next request, about ${tokens} tokens, reaches the ${threshold}-token threshold (${THRESHOLD_RATIO * 100} % of the ${WINDOW}-token window)`,
    )
  }
  if (event.type === 'compaction/summary') {
    foldedSince = true
    console.log(
      `✂ its first ${event.data.shadowedSeqs.length} messages (about ${event.data.shadowedTokenCount} tokens) are replaced by one checkpoint message:`,
    )
    for (const line of checkpoint.split('\n')) console.log(`    ${line}`)
  }
  if (event.type === 'compaction/failure') console.log(`✂ compaction failed: ${event.data.reason}`)
})

const agent = await ctx.agentLoop.create('demo', {
  provider: 'scripted',
  model: 'scripted-model',
  reasoningEffort: 'max',
  system: 'You are a careful coding agent.',
})
agent.followup('The add test fails. Fix it.')
await agent.whenIdle()
const written = canonicalJson(agent.session.deriveMessages().map(promptView))
const compactions = agent.session.events.filter(
  (event) => event.type === 'compaction/end' && event.data.error === undefined,
).length
// A database store releases asynchronously: wait for its last flush before the context stops.
await ctx.sessions.closeAll()
await ctx.stop()
console.log(`\nwrote ${agent.session.length} events to ${where}; ${compactions} compaction(s) committed`)
const reportCommand =
  spec && spec.kind !== 'file' ? `--store ${describeStore(spec)} demo` : join(directory, 'demo.jsonl')
console.log(
  `every request's cache use, as the cache ledger logged it: npx -y pnpm@12.4.2 warmfold report ${reportCommand}${temporary ? ' (after pnpm demo FOLDER, which keeps the log)' : ''}`,
)

const reader = new Context()
await reader.start()
reader.plugin(SessionStore, { store: newStore(), directory })
const reopened = await reader.sessions.open('demo')
const read = canonicalJson(reopened.deriveMessages().map(promptView))
console.log(
  `reopened ${reopened.length} events in a fresh Context; header effort=${reopened.requestHeader()?.config.reasoningEffort}`,
)
console.log(read === written ? 'messages byte-identical after reopen: yes' : 'messages byte-identical after reopen: NO')
await reader.sessions.closeAll()
await reader.stop()
if (read !== written || compactions === 0) process.exitCode = 1
