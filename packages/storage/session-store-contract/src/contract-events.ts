import {
  canonicalJson,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import type { Session } from '@warmfold/session'

/** Every stored event of `session`, as the canonical JSON a store writes (without unit marks). */
export function eventsJson(session: Session): string[] {
  return session.events.map((event) => canonicalJson(event))
}

/** The bytes of the next request built from `session`: header and messages, canonical JSON. */
export function nextRequestJson(session: Session): string {
  return canonicalJson({ header: session.requestHeader() ?? null, messages: session.deriveMessages() })
}

/** A short conversation with a header, a tool call, a two-event unit (a replace) and a user turn. */
export function appendConversation(session: Session, round = 0): void {
  const id = (name: string) => `r${round}-${name}`
  session.append('request/header', {
    header: { config: { provider: 'p', model: 'm', reasoningEffort: 'high' }, system: 'Be brief.' },
    reason: round === 0 ? 'initial' : 'change',
  })
  session.append('user/message', { message: createUserMessage(`List the files (round ${round}).`, id('u')) }, 'append')
  const call = toolCallBlock(id('call'), 'list', '{"path":"src"}')
  session.append(
    'assistant/message',
    { message: createAssistantMessage([textBlock('Listing.'), call], { provider: 'p', model: 'm' }, id('a')) },
    'append',
  )
  const result = session.append(
    'tool/result',
    { message: createToolResultMessage(id('call'), 'a.ts\nb.ts\n'.repeat(50), { id: id('t') }) },
    'append',
  )
  const position = session.surface.nodes.indexOf(result.seq)
  session.unit(() => {
    const note = createUserMessage('ünïcödé ✓ "quoted" \\ back', id('note'))
    session.append('user/message', { message: note }, 'append')
    session.append(
      'tool/result',
      { message: createToolResultMessage(id('call'), '100 files', { id: id('t2') }) },
      { op: 'replace', start: position, end: position, sourceEventSeqs: [result.seq] },
    )
  })
}
