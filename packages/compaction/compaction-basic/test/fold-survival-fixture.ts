import type { Agent } from '@warmfold/agent-loop'
import { isCheckpointMessage, pinMessage } from '@warmfold/compaction'
import type { GenerateOptions, Message } from '@warmfold/llm'
import { canonicalJson, createUserMessage, promptView, textBlock, toolCallBlock } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import type { Session, SessionEvent } from '@warmfold/session'
import type { EngineHarness } from './engine-fixture.ts'
import { filler, ROUTE } from './engine-fixture.ts'

/** The project rules the host pins: about 200 tokens. */
export const RULES = createUserMessage(
  `Project rules: never edit generated files; run the tests before every commit. ${filler(7, 700)}`,
  'rules',
)

/** A conversation script: each user request runs `steps` read steps, then an answer. */
export function requestsOf(steps: number) {
  let step = 0
  return {
    /** Starts the step count of a new request. */
    next(): void {
      step = 0
    },
    reply(_request: GenerateOptions, index: number): ScriptedReply {
      return step++ >= steps
        ? { content: `Finished this request. ${filler(index, 40)}` }
        : {
            content: [
              textBlock(`Step ${index}: reading. ${filler(index, 60)}`),
              toolCallBlock(`call-${index}`, 'read', `{"path":"src/file-${index}.ts"}`),
            ],
          }
    },
  }
}

/** A conversation request, with the log length when it was sent. */
export interface SentRequest {
  readonly request: GenerateOptions
  readonly logLength: number
}

/** Records every conversation request of `session` with the log length at send time. */
export function recordConversation(harness: EngineHarness, session: Session): SentRequest[] {
  const sent: SentRequest[] = []
  harness.ctx.on('llm/stream', (request) => {
    if (request.purpose === 'conversation' && request.sessionId === session.id)
      sent.push({ request, logLength: session.length })
  })
  return sent
}

/** The checkpoint commits (`compaction/summary` events) of `session`, oldest first. */
export function folds(session: Session): SessionEvent<'compaction/summary'>[] {
  return session.events.filter((event) => event.type === 'compaction/summary') as SessionEvent<'compaction/summary'>[]
}

/** The prompt bytes of a message: what a provider receives. */
export function bytesOf(message: Message): string {
  return canonicalJson(promptView(message))
}

/** The message of surface event `seq` as it was logged. */
export function loggedMessage(session: Session, seq: number): Message {
  const event = session.eventAt(seq)
  const message = event && session.deriveEventMessage(event)
  if (!message) throw new Error(`seq ${seq} is not a surface event`)
  return message
}

/** The first conversation request sent after the log reached `length`. */
export function requestAfter(sent: readonly SentRequest[], length: number): GenerateOptions {
  const found = sent.find((entry) => entry.logLength >= length)
  if (!found) throw new Error(`no conversation request after log length ${length}`)
  return found.request
}

/**
 * A session that pins the project rules (its first request, {@link RULES} unless given) and the result of the first read
 * (with its call), then runs requests of `steps` steps until `count` folds committed.
 * @returns the agent, its conversation requests, the pinned seqs and the user messages the host sent.
 */
export async function foldThreeTimes(
  harness: EngineHarness,
  script: ReturnType<typeof requestsOf>,
  sessionId: string,
  count = 3,
  rules: Message = RULES,
) {
  const agent: Agent = await harness.ctx.agentLoop.create(sessionId, { ...ROUTE, system: 'You are a coding agent.' })
  const sent = recordConversation(harness, agent.session)
  script.next()
  agent.followup(rules)
  await agent.whenIdle()
  const session = agent.session
  const firstResult = session.events.find((event) => event.type === 'tool/result')!
  const firstCall = session.events.find((event) => event.type === 'assistant/message')!
  pinMessage(session, rules)
  pinMessage(session, firstResult.seq)
  const requests: Message[] = [rules]
  for (let turn = 1; folds(session).length < count; turn++) {
    if (turn > 20) throw new Error(`fewer than ${count} folds after 20 requests`)
    const request = createUserMessage(`Request ${turn}: refactor module ${turn} and keep its API.`, `request-${turn}`)
    requests.push(request)
    script.next()
    agent.followup(request)
    await agent.whenIdle()
  }
  const rulesSeq = session.events.find(
    (event) => event.type === 'user/message' && event.data.message.id === rules.id,
  )!.seq
  return { agent, session, sent, pinned: [rulesSeq, firstCall.seq, firstResult.seq], requests }
}

/** Whether `message` is a checkpoint (re-exported for the tests' readability). */
export const isCheckpoint = isCheckpointMessage
