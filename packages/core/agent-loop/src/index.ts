export { Agent } from './agent.ts'
export type { AgentErrorCode } from './agent-error.ts'
export { AgentError } from './agent-error.ts'
export type {
  PreStepContext,
  RequestErrorAction,
  RequestErrorContext,
  RequestHookContext,
  ResumeContext,
} from './agent-events.ts'
export type { AgentHandle, AgentStatus, MaintenanceOptions } from './agent-handle.ts'
export { AgentLoop, AgentLoop as default } from './agent-loop.ts'
export type { AgentOptions } from './agent-options.ts'
export { DEFAULT_MAX_STEP_RETRIES, DEFAULT_MAX_STEPS, DEFAULT_TOOL_TIMEOUT_MS } from './agent-options.ts'
export type { AgentRequest } from './agent-request.ts'
export type { ForkLineage } from './fork-lineage.ts'
export type { ForkOptions, ForkResult } from './fork-options.ts'
export type { ServiceRequirement } from './missing-service-error.ts'
export {
  LLM_RUNTIME_SERVICE,
  MissingServiceError,
  requireServices,
  SESSION_STORE_SERVICE,
  TOOL_REGISTRY_SERVICE,
} from './missing-service-error.ts'
export { replayWithMessage, requestFromHeader } from './replay-with-message.ts'
export type { Tool, ToolExecutionContext } from './tool-registry.ts'
export { ToolRegistry } from './tool-registry.ts'
export type { TurnEndReason, TurnResult } from './turn-result.ts'
