import type { RequestApi } from '@warmfold/cache-ledger/prefix'

/**
 * How an agent's summary request departs from its conversation requests:
 * - `toolless`: the same input plus an instruction item, but the tools dropped (Codex);
 * - `replaced-system`: its own summarizer system prompt, no tools, the history verbatim-ish;
 * - `warm`: already a replay with the instruction appended (Claude Code): forwarded untouched;
 * - `transcript`: the history flattened into one text transcript (opencode, pi).
 */
export type SummaryShape = 'toolless' | 'replaced-system' | 'warm' | 'transcript'

/** One known agent's summary request (or, `call: 'verification'`, the call that checks its answer). */
export interface KnownAgent {
  /** Short id, logged as the recognition's `agent`. */
  readonly agent: string
  readonly name: string
  /** The versions whose request this entry describes, and where its text was read. */
  readonly versions: string
  readonly apis: readonly RequestApi[]
  readonly shape: SummaryShape
  readonly call: 'summary' | 'verification'
  /** Phrases of the summary request's system prompt; any one marks it. */
  readonly systemMarkers: readonly string[]
  /** Phrases of its final instruction (the last message's text); any one marks it. */
  readonly instructionMarkers: readonly string[]
}

const CHAT_LIKE: readonly RequestApi[] = ['openai-chat', 'openai-responses', 'anthropic-messages']

/**
 * The known agents, versioned. Markers are verbatim phrases of each agent's own prompt text
 * (sources in the README); an agent whose version changed its text simply stops matching and its
 * request passes through, recognised by structure only.
 */
export const KNOWN_AGENTS: readonly KnownAgent[] = Object.freeze([
  {
    agent: 'codex',
    name: 'Codex CLI',
    versions: '0.171.0 measured; prompt: codex-rs core/templates/compact/prompt.md (SUMMARIZATION_PROMPT)',
    apis: ['openai-responses'],
    shape: 'toolless',
    call: 'summary',
    systemMarkers: [],
    instructionMarkers: ['You are performing a CONTEXT CHECKPOINT COMPACTION.'],
  },
  {
    agent: 'qwen-code',
    name: 'Qwen Code',
    versions: '0.24.4 measured; prompt: packages/core/src/core/prompts.ts getCompressionPrompt (both wordings)',
    apis: ['openai-chat'],
    shape: 'replaced-system',
    call: 'summary',
    systemMarkers: [
      'You are the component that summarizes a conversation when its context window is about to overflow.',
      'You are the component that compresses internal chat history into a durable mission snapshot.',
      'You are a specialized system component responsible for distilling chat history into a structured XML',
    ],
    instructionMarkers: [
      'First, reason in your <analysis> block. Then, produce the <state_snapshot> XML.',
      'First, reason in your scratchpad. Then, generate the <state_snapshot>.',
    ],
  },
  {
    agent: 'gemini-cli',
    name: 'Gemini CLI',
    versions: '0.61.0 measured; prompt: packages/core/src/prompts/snippets.ts getCompressionPrompt',
    apis: ['gemini'],
    shape: 'replaced-system',
    call: 'summary',
    systemMarkers: [
      'You are a specialized system component responsible for distilling chat history into a structured XML',
    ],
    instructionMarkers: [
      'Generate a new <state_snapshot> based on the provided history.',
      'A previous <state_snapshot> exists in the history.',
      'First, reason in your scratchpad. Then, generate the updated <state_snapshot>.',
    ],
  },
  {
    agent: 'gemini-cli',
    name: 'Gemini CLI (verification call)',
    versions: '0.61.0 measured; packages/core/src/context/chatCompressionService.ts "Probe" verification',
    apis: ['gemini'],
    shape: 'replaced-system',
    call: 'verification',
    systemMarkers: [
      'You are a specialized system component responsible for distilling chat history into a structured XML',
    ],
    instructionMarkers: ['Critically evaluate the <state_snapshot> you just generated.'],
  },
  {
    agent: 'claude-code',
    name: 'Claude Code',
    versions: '2.1.332 measured (the replay path)',
    apis: ['anthropic-messages'],
    shape: 'warm',
    call: 'summary',
    systemMarkers: [],
    instructionMarkers: [
      'CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.',
      'Your task is to create a detailed summary of the conversation so far',
    ],
  },
  {
    agent: 'claude-code',
    name: 'Claude Code (summarizer system prompt)',
    versions: 'the second path, seen July 2026 (raine/claude-code-proxy PR #67)',
    apis: ['anthropic-messages'],
    shape: 'replaced-system',
    call: 'summary',
    systemMarkers: ['You are a helpful AI assistant tasked with summarizing conversations'],
    instructionMarkers: [],
  },
  {
    agent: 'opencode',
    name: 'opencode',
    versions: '1.18.33 measured; prompt: packages/opencode/src/agent/prompt/compaction.txt',
    apis: CHAT_LIKE,
    shape: 'transcript',
    call: 'summary',
    systemMarkers: ['You are a context summarization agent.'],
    instructionMarkers: [
      'Create a new anchored summary from the conversation history',
      'Update the anchored summary below using the conversation history',
    ],
  },
  {
    agent: 'pi',
    name: 'pi',
    versions: '0.73.1 measured; prompt: pi-mono coding-agent src/core/compaction (0.58.3)',
    apis: CHAT_LIKE,
    shape: 'transcript',
    call: 'summary',
    systemMarkers: ['You are a context summarization assistant.'],
    instructionMarkers: [
      'The messages above are a conversation to summarize.',
      'The messages above are NEW conversation messages to incorporate into the existing summary',
      // Its turn-prefix summary, when the cut falls inside a turn (recorded with 0.73.1).
      'This is the PREFIX of a turn that was too large to keep.',
    ],
  },
] satisfies KnownAgent[])

/** A known agent whose markers a request carries, and which of them. */
export interface AgentMatch {
  readonly known: KnownAgent
  readonly systemMarker: boolean
  readonly instructionMarker: boolean
}

/**
 * The known agent of `api` whose markers `systemText` or `instructionText` carry; an entry
 * matching both beats one matching one. Undefined when none does.
 */
export function matchKnownAgent(api: RequestApi, systemText: string, instructionText: string): AgentMatch | undefined {
  let best: AgentMatch | undefined
  for (const known of KNOWN_AGENTS) {
    if (!known.apis.includes(api)) continue
    const systemMarker = known.systemMarkers.some((marker) => systemText.includes(marker))
    const instructionMarker = known.instructionMarkers.some((marker) => instructionText.includes(marker))
    if (!systemMarker && !instructionMarker) continue
    const score = Number(systemMarker) + Number(instructionMarker)
    if (!best || score > Number(best.systemMarker) + Number(best.instructionMarker))
      best = { known, systemMarker, instructionMarker }
  }
  return best
}

/** Whether `agent` makes a call that extends its summary request (Gemini CLI's verification call). */
export function hasVerificationCall(agent: string): boolean {
  return KNOWN_AGENTS.some((known) => known.agent === agent && known.call === 'verification')
}
