import type { Context } from '@cordisjs/core'
import type { CompactionAfterContext } from '@warmfold/compaction'
import { compactionAfterSource } from '@warmfold/compaction'
import type { ContentBlock, Message } from '@warmfold/llm'
import { createMessage } from '@warmfold/llm'

/** What the `compaction/after` listeners are told. */
export type CompactionAfterInput = Omit<CompactionAfterContext, 'append'>

/** Block types a `compaction/after` message may hold: it is a plain user message. */
const APPENDABLE_BLOCKS: ReadonlySet<string> = new Set(['text', 'image'])

/**
 * Runs the `compaction/after` hook (listeners in order, awaited) and returns the user messages
 * they queued, in order, ready to be appended in the checkpoint's commit. With `addTrailEntry`
 * (the artifact trail is on), listeners may add lines to the trail through the context. A listener's throw
 * propagates: the caller refuses the compaction.
 */
export async function runCompactionAfter(
  ctx: Context,
  input: CompactionAfterInput,
  addTrailEntry?: (text: string) => void,
): Promise<Message[]> {
  const queued: Message[] = []
  let open = true
  const ensureOpen = (method: string): void => {
    if (!open)
      throw new TypeError(
        `compaction/after: ${method} was called after the hook of compaction ${input.compactionId} ended; its ` +
          'checkpoint is already committed or refused',
      )
  }
  const context: CompactionAfterContext = {
    ...input,
    append(content) {
      ensureOpen('append')
      queued.push(
        createMessage({
          role: 'user',
          content: checkContent(content, input.compactionId),
          source: compactionAfterSource(input.compactionId),
        }),
      )
    },
    ...(addTrailEntry === undefined
      ? {}
      : {
          addTrailEntry(text: string) {
            ensureOpen('addTrailEntry')
            addTrailEntry(text)
          },
        }),
  }
  try {
    await ctx.serial('compaction/after', context)
  } finally {
    open = false
  }
  return queued
}

function checkContent(content: unknown, compactionId: string): string | ContentBlock[] {
  const where = `compaction/after (compaction ${compactionId}): append`
  if (typeof content === 'string') {
    if (content === '') throw new TypeError(`${where} got empty text; append something or nothing`)
    return content
  }
  if (!Array.isArray(content) || content.length === 0)
    throw new TypeError(
      `${where} needs text or a non-empty array of content blocks, got ${JSON.stringify(content) ?? String(content)}`,
    )
  for (const [index, block] of content.entries()) {
    const type = (block as { type?: unknown } | null)?.type
    if (typeof type !== 'string' || !APPENDABLE_BLOCKS.has(type)) {
      throw new TypeError(
        `${where}: block ${index} has type ${JSON.stringify(type)}; only text and image blocks can be appended (a ` +
          'user message carries no tool calls or results)',
      )
    }
  }
  return content as ContentBlock[]
}
