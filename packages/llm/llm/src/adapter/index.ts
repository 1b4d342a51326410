// `@warmfold/llm/adapter`: the helpers an LLM adapter package is built from (config checks, error
// mapping, retries, secret redaction). Hosts do not need them; they import from `@warmfold/llm`.
export type { AdapterCallContext } from '../adapter-call-context.ts'
export { callAborted, streamIncomplete } from '../adapter-call-context.ts'
export type { ApiKeySource } from '../adapter-config.ts'
export {
  checkAdapterConnection,
  checkModelKeys,
  dropEmptyEfforts,
  isHttpUrl,
  resolveAdapterApiKey,
} from '../adapter-config.ts'
export { describeConnectionFailure } from '../connection-failure.ts'
export { codeForHttpStatus } from '../http-status-code.ts'
export { checkOutputReserve, reasoningInfo } from '../output-reserve.ts'
export { parseRetryAfter } from '../parse-retry-after.ts'
export { parseToolArguments } from '../parse-tool-arguments.ts'
export { LLM_ADAPTER_ROLE } from '../plugin-failures.ts'
export { modelEntry, resilientStream } from '../resilient-stream.ts'
export { nextRetry } from '../retry-stream.ts'
export type { SecretRedactor } from '../secret-redactor.ts'
export { normalizeApiKey, REDACTED, secretRedactor } from '../secret-redactor.ts'
export type { StreamBlockType } from '../stream-chunk.ts'
export { misplacedBlock, unsendable } from '../unsendable.ts'
