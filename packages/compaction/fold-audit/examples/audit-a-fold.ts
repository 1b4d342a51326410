import { auditFold, buildArtifactTrail, extractArtifacts } from '@warmfold/fold-audit'
import type { LoggedMessage } from '@warmfold/fold-audit'
import { createAssistantMessage, createToolResultMessage, createUserMessage, toolCallBlock } from '@warmfold/llm'

/**
 * One fold, audited. `region` is what the fold replaces, `summary` what the model wrote for it
 * and `tail` what stays after the checkpoint; an engine has all three at hand.
 */
export function main() {
  const route = { provider: 'deepseek', model: 'deepseek-v4-flash' }
  const region: LoggedMessage[] = [
    { seq: 0, message: createUserMessage('The build fails. Do not touch src/api/public.ts.') },
    {
      seq: 1,
      message: createAssistantMessage([toolCallBlock('call-1', 'bash', '{"command":"npx tsc --noEmit"}')], route),
    },
    {
      seq: 2,
      message: createToolResultMessage(
        'call-1',
        "src/billing/invoice.ts(42,7): error TS2322: Type 'string' is not assignable to type 'number'.\nExit code: 2",
        { isError: true },
      ),
    },
  ]
  const tail = [createUserMessage('Go on.')]
  const summary = '## Goal and Intent\n- Fix the build.\n## Errors and Fixes\n- TS2322 in src/billing/invoice.ts'

  // 1. What the region held, by class (paths, commands, errors, identifiers, numbers, URLs, user sentences).
  const extraction = extractArtifacts(region)
  // 2. A deterministic section the engine appends to the checkpoint (about 1,000 tokens at most).
  const trail = buildArtifactTrail(extraction, { maxTokens: 1000 })
  const checkpointText = `${summary}\n\n${trail.text}`
  // 3. What survived, verbatim, in everything the model reads after the fold.
  const audit = auditFold({
    folded: extraction.artifacts,
    checkpointText,
    visibleAfter: tail,
    requiredSections: ['Goal and Intent', 'Errors and Fixes', 'Next Step'],
    finishReason: 'stop',
  })
  // audit.classes.error → { seen: 1, kept: 1, keptInCheckpoint: 1 } (the trail holds the error)
  // audit.health.sectionsMissing → ['Next Step']
  // audit.dropped → [{ class: 'user-message', text: 'The build fails', origin: 'user', … }] (not a constraint, so not in the trail)
  return { extraction, trail, audit }
}
