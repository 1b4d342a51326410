import { Context } from '@cordisjs/core'
import { createAssistantMessage, createUserMessage, textBlock } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'
import { TokenMeter } from '@warmfold/token-meter'

export async function main() {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(SessionStore, { store: 'memory' })
  ctx.plugin(TokenMeter, {}) // or { tokenizer: (text: string) => encode(text).length }

  // The agent loop (@warmfold/agent-loop) logs these as it runs; appended by hand here.
  const session = await ctx.sessions.create('my-session')
  const config = { provider: 'deepseek', model: 'deepseek-v4-flash', reasoningEffort: 'max' }
  session.append('request/header', { header: { config, system: 'You are a coding agent.' }, reason: 'initial' })
  session.append('user/message', { message: createUserMessage('Why is the test failing?') }, 'append')
  const reply = createAssistantMessage([textBlock('The assertion expects 4 but `add` subtracts.')], config)
  // The provider counted this request's prompt: 1,200 tokens, 1,000 of them read from its cache.
  session.append(
    'assistant/message',
    { message: reply, usage: { inputTokens: 200, cacheReadTokens: 1000, outputTokens: 12 } },
    'append',
  )
  session.append('user/message', { message: createUserMessage('Fix it.') }, 'append')

  const contextWindow = 131_072
  const measurement = ctx.tokenMeter.measure(session)
  const compact = measurement.totalTokens > 0.8 * contextWindow // false: far below the window
  const result = {
    compact,
    totalTokens: measurement.totalTokens, // 1,200 reported + the reply and the new message, estimated
    baseline: measurement.baseline, // { kind: 'usage', tokens, anchorSeq: 2, reportedPromptTokens: 1200 }
    nodes: measurement.nodes, // [{ seq: 1, tokens }, { seq: 2, tokens }, { seq: 3, tokens }]: each surface node's price
  }
  await ctx.stop()
  return result
}
