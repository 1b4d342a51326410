export { JsonlFileBackend } from './jsonl-file-backend.ts'
export { MemoryBackend } from './memory-backend.ts'
export type { Liveness, ProcessIdentity } from './process-liveness.ts'
export { currentProcess, liveness } from './process-liveness.ts'
export { readSessionFile } from './read-session-file.ts'
export type { RequestHeader } from './request-header.ts'
export { canonicalHeader, headerEquals } from './request-header.ts'
export type { OpenOptions, SessionBackend, TornTailRepair } from './session-backend.ts'
export type { SessionErrorCode } from './session-error.ts'
export { SessionError } from './session-error.ts'
export type {
  AnySessionEvent,
  SessionEvent,
  SessionEventMap,
  SessionEventType,
  SurfaceEventType,
} from './session-event.ts'
export { SESSION_ID_PATTERN, SessionStore } from './session-store.ts'
export type { AppendCandidate, SessionOptions, SessionSurface } from './session.ts'
export { Session } from './session.ts'
export { restoreStoredLine, storedLines } from './stored-line.ts'
export { SessionStore as default } from './session-store.ts'
