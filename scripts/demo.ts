/**
 * A short scripted demo of what warmfold has today: a tool-using conversation run through the
 * real agent loop and `ctx.llm` runtime (only the model's replies are scripted), logged to the
 * JSONL file store, then reopened in a fresh Context and checked byte for byte.
 */
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@cordisjs/core'
import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { canonicalJson, LlmRuntime, promptView, textBlock, toolCallBlock } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { SessionStore } from '@warmfold/session'

const directory = process.argv[2] ?? (await mkdtemp(join(tmpdir(), 'warmfold-demo-')))
const files: Record<string, string> = { 'src/add.ts': 'export const add = (a, b) => a - b\n', 'test/add.test.ts': "expect(add(2, 2)).toBe(4)\n" }

const ctx = new Context()
await ctx.start()
ctx.plugin(LlmRuntime)
ctx.plugin(SessionStore, { store: 'file', directory })
ctx.plugin(ToolRegistry)
ctx.plugin(AgentLoop)
const script = [
  { content: [textBlock('Let me read the test.'), toolCallBlock('call-1', 'read', '{"path":"test/add.test.ts"}')] },
  { content: [textBlock('Now the source.'), toolCallBlock('call-2', 'read', '{"path":"src/add.ts"}')] },
  { content: [textBlock('The operator is wrong.'), toolCallBlock('call-3', 'write', '{"path":"src/add.ts","text":"export const add = (a, b) => a + b\\n"}')] },
  { content: 'Fixed: `add` subtracted instead of adding.' },
]
ctx.llm.registerAdapter('scripted', new ScriptedAdapter({
  models: { 'scripted-model': { contextWindow: 32000, defaultMaxTokens: 2000, reasoning: { efforts: ['low', 'high', 'max'], defaultEffort: 'high' } } },
  responses: script,
}))
ctx.tools.register({ name: 'read', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }, execute: (args) => files[(args as { path: string }).path] ?? 'no such file' })
ctx.tools.register({ name: 'write', description: 'Write a file', parameters: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } }, required: ['path', 'text'] }, execute: (args) => {
  const { path, text } = args as { path: string; text: string }
  files[path] = text
  return `wrote ${text.length} characters to ${path}`
} })

let previous: string[] = []
ctx.on('llm/stream', (options) => {
  const elements = [canonicalJson(options.system ?? null), canonicalJson(options.tools ?? []), ...options.messages.map((message) => canonicalJson(promptView(message)))]
  const kept = previous.every((element, index) => elements[index] === element)
  const last = options.messages.at(-1)
  const lastText = last?.content.map((block) => (block.type === 'text' ? block.text : block.type === 'tool-result' ? `[tool result: ${block.content.map((part) => (part.type === 'text' ? part.text.trim() : '')).join('')}]` : `[${block.type}]`)).join(' ')
  console.log(`→ ${options.purpose} request to ${options.provider}/${options.model} effort=${options.reasoningEffort} maxTokens=${options.maxTokens} tools=${options.tools?.map((tool) => tool.name).join(',')}`)
  console.log(`  ${options.messages.length} message(s), previous request kept as prefix: ${kept ? 'yes' : 'NO'}; last: ${lastText}`)
  previous = elements
})

const agent = await ctx.agentLoop.create('demo', { provider: 'scripted', model: 'scripted-model', reasoningEffort: 'max', system: 'You are a careful coding agent.' })
agent.followup('The add test fails. Fix it.')
await agent.whenIdle()
const written = canonicalJson(agent.session.deriveMessages().map(promptView))
await ctx.stop()
console.log(`\nwrote ${agent.session.length} events to ${join(directory, 'demo.jsonl')}`)

const reader = new Context()
await reader.start()
reader.plugin(SessionStore, { store: 'file', directory })
const reopened = await reader.sessions.open('demo')
const read = canonicalJson(reopened.deriveMessages().map(promptView))
console.log(`reopened ${reopened.length} events in a fresh Context; header effort=${reopened.requestHeader()?.config.reasoningEffort}`)
console.log(read === written ? 'messages byte-identical after reopen: yes' : 'messages byte-identical after reopen: NO')
await reader.stop()
if (read !== written) process.exit(1)
