import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import { isRecord } from '@warmfold/cache-ledger/prefix'
import { withoutCallIdPrefixes } from './gemini-call-ids.ts'
import type { KnownAgent } from './known-agents.ts'
import { splitTranscript, transcribedUpTo, transcriptTail, wrapInstruction } from './summary-instruction.ts'
import type { RememberedRequest } from '../proxy-exchange.ts'
import type { WireView } from './wire-view.ts'
import { wireViewOf } from './wire-view.ts'

/** The final user text of a rewrite and the summary's messages kept before it. */
export interface SummaryText {
  readonly wrapped: string
  /** The summary request's history beyond the conversation request, in wire form. */
  readonly extra: readonly unknown[]
  /** Transcript agents: the characters of the transcript the replay stands for. */
  readonly transcriptChars?: number
}

/** How many of the replayed history's last messages must show up in a transcript. */
const TRANSCRIBED_MESSAGES = 8
const SNIPPET_CHARS = 48

/**
 * What a rewrite of the summary request `view` (of `known`) appends after the conversation
 * request `conversation`: the history the summary holds beyond it, and the agent's own text
 * wrapped. A transcript agent's transcript is dropped (the replay stands for it) once it is seen
 * to transcribe the replayed history; what it holds after that (the last answer, which no
 * request carried) goes into the text. Or why no rewrite can be made.
 */
export function summaryText(
  api: RequestApi,
  view: WireView,
  conversation: WireView,
  known: KnownAgent,
): SummaryText | { readonly reason: string } {
  if (known.shape === 'transcript') return transcriptText(view, conversation, known)
  const history = view.items.length - view.head - 1
  const replayed = conversation.items.length - conversation.head
  const beyond = history > replayed ? view.items.slice(view.head + replayed, -1) : []
  const wrapped = wrapInstruction({
    agent: known.agent,
    ...(known.shape === 'replaced-system' ? { summarizerSystem: view.systemText } : {}),
    instruction: view.instructionText,
  })
  return { wrapped, extra: api === 'gemini' ? withoutCallIdPrefixes(beyond) : beyond }
}

function transcriptText(view: WireView, conversation: WireView, known: KnownAgent): SummaryText | { reason: string } {
  const parts = splitTranscript(view.instructionText)
  if (!parts)
    return { reason: `${known.name}'s summary request holds no <conversation> transcript in its last message` }
  const snippets = conversation.items
    .slice(conversation.head)
    .map(snippetOf)
    .filter((snippet) => snippet.length >= 8)
    .slice(-TRANSCRIBED_MESSAGES)
  const upTo = transcribedUpTo(parts.transcript, snippets)
  if (upTo === -1)
    return {
      reason:
        `its transcript does not transcribe the remembered conversation request ` +
        `(none of its last ${snippets.length} messages' texts found in order)`,
    }
  const wrapped = wrapInstruction({
    agent: known.agent,
    summarizerSystem: view.systemText,
    instruction: parts.instruction,
    since: transcriptTail(parts.transcript, upTo),
  })
  return { wrapped, extra: [], transcriptChars: parts.transcript.length }
}

/**
 * Among `candidates` (latest first), the conversation request whose history the transcript agent's
 * summary request `view` transcribes: its messages repeat none of the conversation's, so the
 * memory's prefix lookup cannot find it.
 */
export function transcribedConversation(
  api: RequestApi,
  view: WireView,
  known: KnownAgent,
  candidates: readonly RememberedRequest[],
): RememberedRequest | undefined {
  return candidates.find((candidate) => !('reason' in transcriptText(view, wireViewOf(api, candidate.json), known)))
}

/** The first characters of a message's first text (content, a part's or block's text, a tool output). */
function snippetOf(item: unknown): string {
  const text = firstText(item, 0)
  return text === undefined ? '' : text.trim().slice(0, SNIPPET_CHARS)
}

function firstText(value: unknown, depth: number): string | undefined {
  if (typeof value === 'string') return value
  if (depth > 4) return undefined
  const entries = Array.isArray(value)
    ? value
    : isRecord(value)
      ? ['text', 'content', 'output', 'parts', 'response']
          .map((key) => value[key])
          .filter((entry) => entry !== undefined)
      : []
  for (const entry of entries) {
    const text = firstText(entry, depth + 1)
    if (text !== undefined && text.trim() !== '') return text
  }
  return undefined
}
