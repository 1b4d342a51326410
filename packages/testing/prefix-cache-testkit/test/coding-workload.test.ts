import { describe, expect, it } from 'vitest'
import type { PlantedClass } from '../src/index.ts'
import { foldAuditRecords, PLANTED_CLASSES, runWorkload, summaryCallAudits } from '../src/index.ts'
import { codingStep } from '../src/coding-workload.ts'
import { holdsVerbatim } from '../src/fold-audit-record.ts'
import { LOSSY_RETENTION, lossyKeeps } from '../src/lossy-summary.ts'

describe('the coding workload and its lossy summarizer', () => {
  it('keeps each class about as often as the published retention says (seeded, the same every run)', () => {
    const counts: Record<PlantedClass, { seen: number; kept: number }> = {
      path: { seen: 0, kept: 0 },
      command: { seen: 0, kept: 0 },
      error: { seen: 0, kept: 0 },
    }
    for (let index = 0; index < 6000; index++) {
      for (const artifact of codingStep(index, 200).artifacts) {
        counts[artifact.class].seen++
        if (lossyKeeps(artifact)) counts[artifact.class].kept++
        expect(lossyKeeps(artifact)).toBe(lossyKeeps(artifact))
      }
    }
    for (const artifactClass of PLANTED_CLASSES) {
      const { seen, kept } = counts[artifactClass]
      expect(seen, artifactClass).toBeGreaterThan(2000)
      expect(Math.abs(kept / seen - LOSSY_RETENTION[artifactClass]), artifactClass).toBeLessThan(0.015)
    }
  })

  it("plants each step's own artifacts: no text of one step appears in another step", () => {
    const seen = new Map<string, number>()
    for (let index = 0; index < 120; index++) {
      for (const artifact of codingStep(index, 200).artifacts) {
        expect(seen.get(`${artifact.class} ${artifact.text}`), artifact.text).toBeUndefined()
        seen.set(`${artifact.class} ${artifact.text}`, index)
      }
    }
    expect(holdsVerbatim('see packages/app-11 and src/feature-5/cart.ts', 'packages/app-1')).toBe(false)
    expect(holdsVerbatim('see packages/app-11 and src/feature-5/cart.ts', 'src/feature-5')).toBe(true)
  })

  it('without the artifact trail, the audit drops exactly what the simulator recorded as lost', async () => {
    const run = await runWorkload({ window: 32000, workload: 'coding', artifactTrail: false })
    expect(run.completed).toBe(true)
    const records = foldAuditRecords(run.session, { readChars: run.workload.resultChars, turns: run.workload.turns })
    expect(records.length).toBeGreaterThan(0)
    for (const record of records) {
      expect(record.audit.trail).toBeNull()
      expect(record.lost.length).toBeGreaterThan(0)
      expect(record.agreed).toBe(record.lost.length)
      expect(record.auditDropped).toBe(record.lost.length)
      for (const artifactClass of PLANTED_CLASSES)
        expect(record.audit.classes[artifactClass]).toMatchObject(record.withCheckpoint[artifactClass])
    }
    // Each committed fold's last summary call carries its audit.
    const audits = summaryCallAudits(run.session.events)
    expect(audits).toHaveLength(run.summaryCalls.length)
    expect(audits.filter((audit) => audit !== null).map((audit) => audit.compactionId)).toEqual(
      records.map((record) => record.compactionId),
    )
  })

  it('with the trail, every planted path, command and error survives the lossy summary, within the trail budget', async () => {
    const run = await runWorkload({ window: 32000, workload: 'coding' })
    const records = foldAuditRecords(run.session, { readChars: run.workload.resultChars, turns: run.workload.turns })
    expect(records.length).toBeGreaterThan(0)
    for (const record of records) {
      for (const artifactClass of PLANTED_CLASSES) {
        expect(record.withCheckpoint[artifactClass].kept).toBe(record.withCheckpoint[artifactClass].seen)
        expect(record.summaryAlone[artifactClass].kept).toBeLessThan(record.summaryAlone[artifactClass].seen)
      }
      expect(record.audit.trail!.tokens).toBeLessThanOrEqual(record.audit.trail!.maxTokens)
    }
  })
})
