import type { ToolCallBlock, ToolResultContent } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { describe } from './agent-error.ts'
import type { ToolRegistry } from './tool-registry.ts'

/** The outcome of one tool call, ready to be logged as a `tool/result`. */
export interface ToolCallOutcome {
  readonly content: string | readonly ToolResultContent[]
  /** Set when the call failed; the same text is the result the model sees. */
  readonly error?: string
}

/**
 * Runs one tool call. Bad model output never throws out of here: an unknown tool, arguments
 * that are not valid JSON, a tool that throws, times out or returns nothing usable all become
 * an error outcome whose text names the problem, so the model can correct itself.
 */
export async function executeToolCall(
  tools: ToolRegistry,
  call: ToolCallBlock,
  options: { session: Session; signal: AbortSignal; defaultTimeoutMs: number },
): Promise<ToolCallOutcome> {
  const tool = tools.get(call.name)
  if (!tool) {
    const names = tools.names()
    return failure(`Unknown tool "${call.name}". Available tools: ${names.length ? names.join(', ') : '(none)'}.`)
  }
  let args: unknown
  try {
    args = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments)
  } catch (error) {
    return failure(
      `Invalid arguments for tool "${call.name}": not valid JSON (${(error as Error).message}). Arguments received: ` +
        `${truncate(call.arguments)}`,
    )
  }
  const timeoutMs = tool.timeoutMs ?? options.defaultTimeoutMs
  const controller = new AbortController()
  const onAbort = () => controller.abort(options.signal.reason)
  options.signal.addEventListener('abort', onAbort, { once: true })
  let timer: ReturnType<typeof setTimeout> | undefined
  const stopped = new Promise<'timeout' | 'aborted'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs)
    if (controller.signal.aborted) resolve('aborted')
    controller.signal.addEventListener('abort', () => resolve('aborted'), { once: true })
  })
  try {
    const run = Promise.resolve().then(() =>
      tool.execute(args, { signal: controller.signal, session: options.session, toolCallId: call.id }),
    )
    const result = await Promise.race([run, stopped])
    if (result === 'timeout') {
      controller.abort(new Error(`tool "${call.name}" timed out`))
      return failure(`Tool "${call.name}" timed out after ${timeoutMs} ms.`)
    }
    if (result === 'aborted') return failure(`Tool "${call.name}" was aborted.`)
    if (typeof result === 'string') return { content: result.length ? result : '(no output)' }
    if (Array.isArray(result) && result.length > 0) return { content: result }
    return failure(`Tool "${call.name}" returned no usable content (expected a string or content blocks).`)
  } catch (error) {
    return failure(`Tool "${call.name}" failed: ${describe(error)}`)
  } finally {
    clearTimeout(timer)
    options.signal.removeEventListener('abort', onAbort)
  }
}

function failure(text: string): ToolCallOutcome {
  return { content: text, error: text }
}

function truncate(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}… (${text.length} characters)` : text
}
