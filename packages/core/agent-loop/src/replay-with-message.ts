import type { GenerateOptions, Message } from '@warmfold/llm'
import type { RequestHeader } from '@warmfold/session'

/**
 * The request a logged header and messages make: `{ ...header.config, system, tools, messages }`.
 * Every conversation request of the loop is built here, so the same header and messages always
 * give the same prompt bytes.
 */
export function requestFromHeader(header: RequestHeader, messages: readonly Message[]): GenerateOptions {
  return { ...header.config, system: header.system, tools: header.tools, messages }
}

/**
 * `request` replayed byte for byte (its header and its messages as sent), plus one trailing
 * message: the one move behind a fork's first request (the task) and a warm summary call (the
 * instruction). It reads what `request` wrote to the provider's cache and pays for `message`.
 */
export function replayWithMessage(
  request: { readonly header: RequestHeader; readonly messages: readonly Message[] },
  message: Message,
): GenerateOptions {
  return requestFromHeader(request.header, [...request.messages, message])
}
