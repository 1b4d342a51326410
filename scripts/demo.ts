/**
 * A short scripted demo of what warmfold has today: a conversation sent through the real
 * `ctx.llm` runtime (only the model's replies are scripted), logged to the JSONL file store,
 * then reopened in a fresh Context and checked byte for byte.
 */
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@cordisjs/core'
import { canonicalJson, createAssistantMessage, createUserMessage, LlmRuntime, promptView } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { SessionStore } from '@warmfold/session'

const directory = process.argv[2] ?? (await mkdtemp(join(tmpdir(), 'warmfold-demo-')))
const config = { provider: 'scripted', model: 'scripted-model', reasoningEffort: 'max' }

const writer = new Context()
await writer.start()
writer.plugin(LlmRuntime)
writer.plugin(SessionStore, { store: 'file', directory })
const adapter = new ScriptedAdapter({
  models: { 'scripted-model': { contextWindow: 32000, defaultMaxTokens: 2000, reasoning: { efforts: ['low', 'high', 'max'], defaultEffort: 'high' } } },
  responses: (request, index) => ({ content: `reply ${index} to ${request.messages.length} message(s)`, usage: { inputTokens: 10 * (index + 1), outputTokens: 5 } }),
})
writer.llm.registerAdapter('scripted', adapter)
writer.on('llm/stream', (options) => {
  console.log(`→ request: ${options.provider}/${options.model} effort=${options.reasoningEffort} maxTokens=${options.maxTokens} messages=${options.messages.length}`)
})

const session = await writer.sessions.create('demo')
session.append('request/header', { header: { config, system: 'You are a careful coding agent.' }, reason: 'initial' })
for (const text of ['Read the README.', 'Now summarize it.', 'Thanks!']) {
  session.append('user/message', { message: createUserMessage(text) }, 'append')
  const reply = await writer.llm.generate({ ...config, system: 'You are a careful coding agent.', messages: session.deriveMessages(), purpose: 'conversation' })
  session.append('assistant/message', { message: createAssistantMessage(reply.content, config), usage: reply.usage, finishReason: reply.finishReason }, 'append')
}
const written = canonicalJson(session.deriveMessages().map(promptView))
await writer.sessions.flush(session)
await writer.stop()
console.log(`wrote ${session.length} events to ${join(directory, 'demo.jsonl')}`)

const reader = new Context()
await reader.start()
reader.plugin(SessionStore, { store: 'file', directory })
const reopened = await reader.sessions.open('demo')
const read = canonicalJson(reopened.deriveMessages().map(promptView))
console.log(`reopened ${reopened.length} events; request header effort=${reopened.requestHeader()?.config.reasoningEffort}`)
for (const message of reopened.deriveMessages()) {
  const text = message.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join(' ')
  console.log(`  ${message.role.padEnd(9)} ${text}`)
}
console.log(read === written ? 'byte-identical after reopen: yes' : 'byte-identical after reopen: NO')
await reader.stop()
if (read !== written) process.exit(1)
