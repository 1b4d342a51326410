import type { ToolKind } from '@warmfold/fold-audit'
import { ArtifactExtractor, DEFAULT_MAX_DROPPED, DEFAULT_TRAIL_TOKENS } from '@warmfold/fold-audit'
import { integerRange, integerSchema, numberProblem, unknownKeyMessage } from '@warmfold/llm'
import Schema from 'schemastery'

/** Engine config key `audit`: the model-free audit of every committed fold (`compaction/audit`). */
export interface FoldAuditConfig {
  /** Log a `compaction/audit` event in every committed fold's unit. Default true. */
  enabled?: boolean
  /** Bound of the event's dropped and vanished lists (the totals count every item). Default 20. */
  maxDropped?: number
  /**
   * The host's tool annotation: what each of its tools does (`read`, `write`, `other`). A `write`
   * tool that is not a runner (`edit_file`, not `bash`) puts the files it names under "Files
   * changed" in the artifact trail. Undeclared tools get the name heuristic (see
   * `@warmfold/fold-audit`'s `defaultToolKind`).
   */
  toolKinds?: Record<string, ToolKind>
  /** Absolute paths inside this folder are audited relative to it (`/home/dev/app/src/a.ts` → `src/a.ts`). */
  workspaceRoot?: string
}

/** Engine config key `artifactTrail`: the section code writes into every checkpoint. */
export interface ArtifactTrailConfig {
  /** Append the trail to the checkpoint text. Default true. */
  enabled?: boolean
  /** Token budget of the trail (the token meter's estimate). Default 1000. */
  maxTokens?: number
}

/** `audit` and `artifactTrail` with defaults applied. */
export interface ResolvedFoldAudit {
  readonly audit: Readonly<
    Required<Pick<FoldAuditConfig, 'enabled' | 'maxDropped'>> & Pick<FoldAuditConfig, 'toolKinds' | 'workspaceRoot'>
  >
  readonly trail: Readonly<Required<ArtifactTrailConfig>>
  /** Reads each message once with the audit's options, for every fold of the engine (see `artifact-read-ahead`). */
  readonly extractor: ArtifactExtractor
}

const AUDIT_KEYS = ['enabled', 'maxDropped', 'toolKinds', 'workspaceRoot']
const TRAIL_KEYS = ['enabled', 'maxTokens']
const TOOL_KINDS: readonly string[] = ['read', 'write', 'other']

/** The `audit` schema (typed by hand, like the other sections). */
export function foldAuditSchema(): Schema<FoldAuditConfig> {
  return Schema.object({
    enabled: Schema.boolean().description('Log a compaction/audit event at every committed fold.'),
    maxDropped: integerSchema().description('Bound of the dropped and vanished lists.'),
    toolKinds: Schema.dict(Schema.union(['read', 'write', 'other'])).description(
      'What each tool does: read, write or other.',
    ),
    workspaceRoot: Schema.string().description('Absolute paths inside it are audited relative to it.'),
  }).description('The fold audit.') as unknown as Schema<FoldAuditConfig>
}

export function artifactTrailSchema(): Schema<ArtifactTrailConfig> {
  return Schema.object({
    enabled: Schema.boolean().description('Append the artifact trail to every checkpoint.'),
    maxTokens: integerSchema(1).description('Token budget of the trail.'),
  }).description('The artifact trail written by code into every checkpoint.')
}

/** What is wrong with `audit` or `artifactTrail` (unknown keys, tool kinds), or undefined. */
export function foldAuditProblem(
  audit: FoldAuditConfig | undefined,
  trail: ArtifactTrailConfig | undefined,
): string | undefined {
  for (const key of Object.keys(audit ?? {}))
    if (!AUDIT_KEYS.includes(key)) return `audit: ${unknownKeyMessage(key, AUDIT_KEYS)}`
  for (const key of Object.keys(trail ?? {}))
    if (!TRAIL_KEYS.includes(key)) return `artifactTrail: ${unknownKeyMessage(key, TRAIL_KEYS)}`
  for (const [name, kind] of Object.entries(audit?.toolKinds ?? {})) {
    if (!TOOL_KINDS.includes(kind))
      return `audit.toolKinds.${name} must be 'read', 'write' or 'other', got ${JSON.stringify(kind)}`
  }
  if (audit?.workspaceRoot !== undefined && !audit.workspaceRoot.startsWith('/'))
    return `audit.workspaceRoot must be an absolute path, got ${JSON.stringify(audit.workspaceRoot)}`
  // Checked here as well as by the schemas: the AI SDK bridge checks these options with this alone.
  if (audit?.maxDropped !== undefined) {
    const problem = numberProblem('audit.maxDropped', audit.maxDropped, integerRange())
    if (problem) return problem
  }
  if (trail?.maxTokens !== undefined) return numberProblem('artifactTrail.maxTokens', trail.maxTokens, integerRange(1))
  return undefined
}

export function resolveFoldAudit(
  audit: FoldAuditConfig | undefined,
  trail: ArtifactTrailConfig | undefined,
): ResolvedFoldAudit {
  const options = {
    ...(audit?.toolKinds === undefined ? {} : { toolKinds: audit.toolKinds }),
    ...(audit?.workspaceRoot === undefined ? {} : { workspaceRoot: audit.workspaceRoot }),
  }
  return Object.freeze({
    extractor: new ArtifactExtractor(options),
    audit: Object.freeze({
      enabled: audit?.enabled ?? true,
      maxDropped: audit?.maxDropped ?? DEFAULT_MAX_DROPPED,
      ...options,
    }),
    trail: Object.freeze({ enabled: trail?.enabled ?? true, maxTokens: trail?.maxTokens ?? DEFAULT_TRAIL_TOKENS }),
  })
}
