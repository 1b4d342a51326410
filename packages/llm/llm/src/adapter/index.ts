// `@warmfold/llm/adapter`: the helpers an LLM adapter package is built from (config checks, error
// mapping, retries, secret redaction). Hosts do not need them; they import from `@warmfold/llm`.
export type { AdapterCallContext } from '../adapter-call-context.ts'
export { callAborted, streamIncomplete } from '../adapter-call-context.ts'
export type { ApiKeySource } from '../adapter-config.ts'
export {
  adapterConfigParser,
  attemptLimitsSchema,
  checkAdapterConnection,
  checkModelKeys,
  dropEmptyEfforts,
  isHttpUrl,
  resolveAdapterApiKey,
} from '../adapter-config.ts'
export { describeConnectionFailure } from '../connection-failure.ts'
export { codeForHttpError, codeForHttpStatus } from '../http-status-code.ts'
export { checkOutputReserve, reasoningInfo } from '../output-reserve.ts'
export { parseRetryAfter } from '../parse-retry-after.ts'
export { parseToolArguments } from '../parse-tool-arguments.ts'
export { LLM_ADAPTER_ROLE } from '../plugin-failures.ts'
export type { AttemptLimits } from '../resilient-stream.ts'
export { modelEntry, resilientStream } from '../resilient-stream.ts'
export { nextRetry } from '../retry-stream.ts'
export type { SecretRedactor } from '../secret-redactor.ts'
export { normalizeApiKey, REDACTED, secretRedactor } from '../secret-redactor.ts'
export type { StreamBlockType } from '../stream-chunk.ts'
export { tokenCount, tokenUsage } from '../token-usage.ts'
export { misplacedBlock, unsendable, unsupportedEffort } from '../unsendable.ts'
