import { describe, expect, it } from 'vitest'
import type { BenchReport } from '../src/index.ts'
import { parseBenchArgs } from '../src/index.ts'
import { cli } from './run-cli.ts'

describe('warmfold bench --workload coding', () => {
  it('parses --workload and --artifact-trail, refusing other values by name', () => {
    expect(parseBenchArgs([])).toMatchObject({ workload: 'reading', artifactTrail: true })
    expect(parseBenchArgs(['--workload', 'coding', '--artifact-trail=off'])).toMatchObject({
      workload: 'coding',
      artifactTrail: false,
    })
    expect(() => parseBenchArgs(['--workload', 'chat'])).toThrow(
      '--workload must be one of reading, coding, got "chat"',
    )
    expect(() => parseBenchArgs(['--artifact-trail', 'yes'])).toThrow(
      '--artifact-trail must be one of on, off, got "yes"',
    )
  })

  it("carries each summary call's audit in --json, and the audit agrees with the simulator's record of what each fold lost", async () => {
    const off = await cli([
      'bench',
      '--workload',
      'coding',
      '--artifact-trail',
      'off',
      '--windows',
      '32000',
      '--strategies',
      'warmfold',
      '--json',
    ])
    expect(off.code).toBe(0)
    const report = JSON.parse(off.stdout) as BenchReport
    expect(report.workload).toMatchObject({ workload: 'coding', artifactTrail: false })
    const [run] = report.runs
    const audited = run!.summaryCalls.filter((call) => call.audit !== null)
    expect(audited.length).toBe(run!.foldAudit!.folds)
    for (const call of audited) {
      expect(call.audit!.classes.path!.seen).toBeGreaterThan(call.audit!.classes.path!.kept)
      expect(call.audit!.dropped.length).toBe(call.audit!.droppedTotal)
      expect(call.audit!.trail).toBeNull()
    }
    const audit = run!.foldAudit!
    expect(audit.simulatorLost).toBeGreaterThan(0)
    expect(audit).toMatchObject({
      precision: 1,
      recall: 1,
      agreed: audit.simulatorLost,
      auditDropped: audit.simulatorLost,
    })
  })

  it('with the trail on, paths, commands and errors survive the lossy summary, and the table says so beside the summary alone', async () => {
    const on = await cli(['bench', '--workload', 'coding', '--windows', '32000', '--strategies', 'warmfold'])
    expect(on.code).toBe(0)
    expect(on.stdout).toContain('warmfold bench: coding workload, 60 steps')
    expect(on.stdout).toMatch(
      /32,000 warmfold: paths 100\.0% \(summary alone \d+\.\d%\), commands 100\.0% \(summary alone \d+\.\d%\), errors 100\.0% \(summary alone \d+\.\d%\); trail ≤ [\d,]+ of 1,000 tokens; audit vs simulator: precision 1\.000, recall 1\.000/,
    )
  })
})
