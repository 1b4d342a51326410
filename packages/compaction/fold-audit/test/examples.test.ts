import { describe, expect, it } from 'vitest'
import { main as afterFold } from '../examples/after-fold.ts'
import { main as auditAFold } from '../examples/audit-a-fold.ts'

// The README shows these files verbatim (checked by test-utils' readme-examples test).
describe('README examples run', () => {
  it('audit-a-fold: extracts, writes the trail into the checkpoint, and audits it', () => {
    const { extraction, trail, audit } = auditAFold()
    expect(
      extraction.artifacts.filter((artifact) => artifact.class === 'error').map((artifact) => artifact.text),
    ).toEqual(["TS2322: Type 'string' is not assignable to type 'number'"])
    expect(trail.text).toContain("- `npx tsc --noEmit`: TS2322: Type 'string' is not assignable to type 'number'")
    expect(audit.classes.error).toEqual({ seen: 1, kept: 1, keptInCheckpoint: 1 })
    expect(audit.health.sectionsMissing).toEqual(['Next Step'])
    // The summary says "Fix the build", not the user's sentence, and the trail keeps only constraints and corrections.
    expect(audit.dropped.map((item) => [item.class, item.text, item.origin])).toEqual([
      ['user-message', 'The build fails', 'user'],
    ])
    expect(audit.droppedTotal).toBe(1)
  })

  it('after-fold: one re-read of a folded file, then the first write at step 2', () => {
    const behaviour = afterFold()
    expect(behaviour.repeatedReads).toEqual([
      { seq: 10, name: 'read_file', arguments: '{"path":"src/parser.ts"}', foldedSeq: 0 },
    ])
    expect(behaviour.repeatRate).toBe(1)
    expect(behaviour.baselineRepeatRate).toBe(0)
    expect(behaviour.stepsToFirstWrite).toBe(2)
  })
})
