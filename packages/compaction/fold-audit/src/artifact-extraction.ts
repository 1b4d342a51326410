import type { Artifact } from './artifact.ts'
import type { ToolKind, ToolKinds } from './tool-kind.ts'

/** Options of {@link extractArtifacts}. */
export interface ExtractArtifactsOptions {
  /** Absolute paths inside this folder are written relative to it (`/home/dev/app/src/a.ts` → `src/a.ts`). */
  readonly workspaceRoot?: string
  /** The host's tool kinds; undeclared tools get `defaultToolKind`. Decides which paths a call changed. */
  readonly toolKinds?: ToolKinds
  /**
   * Read reasoning blocks too (default `false`): reasoning is the model's scratch work, often not
   * replayed to it later, so what only it mentions was never a fact the conversation held.
   */
  readonly includeReasoning?: boolean
}

/** What a tool call's result said. */
export interface ToolCallResult {
  /** Seq of the message holding the result. */
  readonly seq: number
  readonly isError: boolean
  /** The exit code the result text reports (`Exit code: 1`), when it reports one. */
  readonly exitCode?: number
  /** The error headlines found in the result, normalized, in order. */
  readonly errors: readonly string[]
}

/** One tool call of the region, with its result when the region holds it. */
export interface ToolCallRecord {
  /** Seq of the assistant message holding the call. */
  readonly seq: number
  readonly id: string
  readonly name: string
  /** The raw arguments, byte for byte as the model wrote them. */
  readonly arguments: string
  readonly kind: ToolKind
  /** The shell command it ran, normalized. */
  readonly command?: string
  /** The paths its path-like arguments name, normalized, each once, in order. */
  readonly paths: readonly string[]
  /** `changed` when the call writes the files it names (edit, write, patch), else `read`. */
  readonly fileAction: 'read' | 'changed'
  readonly result?: ToolCallResult
}

/** The artifacts of a region and the facts about its tool calls that the trail and the behaviour measures read. */
export interface ArtifactExtraction {
  /** One entry per (class, text), in order of first mention. */
  readonly artifacts: readonly Artifact[]
  /** The tool calls, in order. */
  readonly toolCalls: readonly ToolCallRecord[]
  /** Characters of text the region held (text, tool-call arguments, tool results). */
  readonly characters: number
}
