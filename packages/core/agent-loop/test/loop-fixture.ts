import type { ContentBlock, GenerateOptions, ModelInfo } from '@warmfold/llm'
import { canonicalJson, LlmRuntime, promptView, textBlock, toolCallBlock } from '@warmfold/llm'
import type { ScriptedResponses } from '@warmfold/llm/testing'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { SessionStore } from '@warmfold/session'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { AgentLoop, ToolRegistry } from '../src/index.ts'

export const MODEL: ModelInfo = {
  contextWindow: 128000,
  defaultMaxTokens: 4096,
  reasoning: { efforts: ['low', 'high', 'max'], defaultEffort: 'high' },
}
export const ROUTE = { provider: 'scripted', model: 'scripted-model' } as const

/** A mounted loop: real runtime, store, tools and loop; only the model's content is scripted. */
export interface LoopHarness extends TestContext {
  adapter: ScriptedAdapter
  /** Every request, as the `llm/stream` hook saw it. */
  requests: GenerateOptions[]
}

export async function mountLoop(
  responses: ScriptedResponses,
  store: { store: 'memory' } | { store: 'file'; directory: string } = { store: 'memory' },
): Promise<LoopHarness> {
  const context = await createTestContext()
  const { ctx } = context
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, store)
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)
  const adapter = new ScriptedAdapter({ models: { 'scripted-model': MODEL }, responses })
  ctx.llm.registerAdapter('scripted', adapter)
  const requests: GenerateOptions[] = []
  ctx.on('llm/stream', (options) => void requests.push(options))
  return Object.assign(context, { adapter, requests })
}

/** A reply that calls `name` with raw `args`. */
export function callTool(
  id: string,
  name: string,
  args: string,
  text = `calling ${name}`,
): { content: ContentBlock[] } {
  return { content: [textBlock(text), toolCallBlock(id, name, args)] }
}

/** The prompt of a request as an array of canonical elements: system, tools, then each message. */
export function promptElements(request: GenerateOptions): string[] {
  return [
    canonicalJson(request.system ?? null),
    canonicalJson(request.tools ?? []),
    ...request.messages.map((message) => canonicalJson(promptView(message))),
  ]
}

/** Asserts `next` keeps every element of `previous` unchanged and adds at least one. */
export function strictlyExtends(previous: GenerateOptions, next: GenerateOptions): boolean {
  const before = promptElements(previous)
  const after = promptElements(next)
  return after.length > before.length && before.every((element, index) => after[index] === element)
}
