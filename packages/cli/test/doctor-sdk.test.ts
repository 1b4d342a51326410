import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DoctorReport, RequestApi } from '../src/index.ts'
import { REQUEST_APIS, runCli } from '../src/index.ts'
import { MESSAGE_INDEXES, recordScenario, SCENARIO } from './support/record-doctor-scenario.ts'
import { RecordingServer } from './support/recording-server.ts'

let directory: string

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-doctor-sdk-'))
})
afterAll(async () => {
  await rm(directory, { recursive: true, force: true })
})

/** Records the scenario with `api`'s real SDK against a 127.0.0.1 server and returns the log file. */
async function record(api: RequestApi): Promise<{ file: string; log: string }> {
  const server = await new RecordingServer().start()
  try {
    await recordScenario(api, server.url)
  } finally {
    await server.close()
  }
  const file = join(directory, `${api}.jsonl`)
  await writeFile(file, server.log())
  return { file, log: server.log() }
}

async function doctor(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const code = await runCli(['doctor', ...argv], {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += `${text}\n`),
  })
  return { code, stdout, stderr }
}

async function diagnose(file: string): Promise<DoctorReport> {
  const result = await doctor([file, '--json'])
  expect(result.stderr).toBe('')
  expect(result.code).toBe(0)
  return JSON.parse(result.stdout) as DoctorReport
}

/** Per-request noise the SDK really sent on line 3 (every API's summary calls also ask for a larger output budget). */
const NOISE: Record<RequestApi, string[]> = {
  'openai-chat': ['"stream":true', '"stream_options":{"include_usage":true}', '"safety_identifier":"user-4711"'],
  'openai-responses': [
    '"id":"fc_call_1","status":"completed"',
    '"summary":"auto"',
    '"include":["reasoning.encrypted_content"]',
  ],
  'anthropic-messages': [
    '"tool_use_id":"call_2","content":"✓ timer 0',
    '"cache_control":{"type":"ephemeral"}}]}]',
    '"user_id":"session-5"',
  ],
  gemini: [],
}

function withoutModel(requests: DoctorReport['requests']): object[] {
  return requests.map(({ model: _model, idleMs: _idleMs, ...rest }) => rest)
}

describe.each(REQUEST_APIS)('warmfold doctor on requests recorded from the %s SDK', (api) => {
  let recorded: { file: string; log: string }
  let report: DoctorReport
  beforeAll(async () => {
    recorded = await record(api)
    report = await diagnose(recorded.file)
  })
  const line = (index: number) =>
    report.requests.find((request) => request.index === index) as DoctorReport['requests'][number]

  it('reads every line as this API and keeps the conversation warm despite per-request noise', () => {
    const lines = recorded.log.trim().split('\n')
    for (const text of NOISE[api]) expect(lines[2]).toContain(text)
    expect(lines[2]).toMatch(/2000/)
    expect(lines[3]).toMatch(/6000/)
    expect(report.unreadable).toEqual([])
    expect(report.requests.map((request) => request.api)).toEqual(Array(9).fill(api))
    expect(line(1)).toMatchObject({ bestMatch: null, divergence: { part: 'first' }, changes: [], cachedChars: 0 })
    // Line 3 carries the noise (stream flags, replayed item ids, metadata, moved breakpoints).
    for (const index of [2, 3, SCENARIO.append]) {
      expect(line(index).changes).toEqual([])
      expect(line(index).divergence.part).toBe('messages')
      expect(line(index).cachedChars).toBe(line(line(index).bestMatch as number).promptChars)
    }
    expect(line(SCENARIO.append).bestMatch).toBe(SCENARIO.rewroteToolResult)
  })

  it('a warm replay diverges only at its trailing instruction', () => {
    const replay = line(SCENARIO.warmReplay)
    expect(replay.bestMatch).toBe(3)
    expect(replay.changes).toEqual([])
    expect(replay.divergence).toEqual({
      part: 'messages',
      messageIndex: MESSAGE_INDEXES[api].instruction,
      role: 'user',
      charOffset: line(3).promptChars,
    })
    expect(replay.cachedChars).toBe(line(3).promptChars)
    expect(report.breaks.map((item) => item.index)).not.toContain(SCENARIO.warmReplay)
  })

  it('a summary call that dropped the tools breaks at tool 0', () => {
    expect(line(SCENARIO.droppedTools)).toMatchObject({
      bestMatch: 3,
      divergence: { part: 'tools', toolIndex: 0, charOffset: 0 },
      changes: ['tools'],
      cachedChars: 0,
    })
  })

  it('a summary call that replaced the system prompt breaks inside the system prompt, after the tools', () => {
    const summary = line(SCENARIO.replacedSystem)
    expect(summary).toMatchObject({ bestMatch: 3, divergence: { part: 'system' }, changes: ['system'] })
    // The tools come first and are still shared.
    expect(summary.divergence.charOffset).toBeGreaterThan(0)
    expect(summary.cachedChars).toBe(summary.divergence.charOffset)
  })

  it('a summary call that changed the reasoning effort lands in another cache family', () => {
    // reasoning_effort, reasoning.effort, output_config.effort, thinkingConfig.thinkingLevel
    expect(line(SCENARIO.changedEffort)).toMatchObject({
      bestMatch: 3,
      divergence: { part: 'envelope', field: 'reasoningEffort' },
      changes: ['envelope:reasoningEffort'],
      cachedChars: 0,
    })
  })

  it('a request that rewrote an old tool result breaks at that message', () => {
    const rewritten = line(SCENARIO.rewroteToolResult)
    expect(rewritten.changes).toEqual(['messages'])
    expect(rewritten.divergence).toMatchObject({
      part: 'messages',
      messageIndex: MESSAGE_INDEXES[api].toolResult,
      role: MESSAGE_INDEXES[api].toolResultRole,
    })
    expect(rewritten.cachedChars).toBe(rewritten.divergence.charOffset)
    expect(rewritten.bestMatch).toBe(SCENARIO.warmReplay)
  })

  it('lists exactly the four breaks, most uncached first, each with its own diagnosis', () => {
    expect(report.breaks.map((item) => item.index).toSorted((a, b) => a - b)).toEqual([
      SCENARIO.droppedTools,
      SCENARIO.replacedSystem,
      SCENARIO.changedEffort,
      SCENARIO.rewroteToolResult,
    ])
    const uncached = report.breaks.map((item) => item.uncachedChars)
    expect(uncached).toEqual(uncached.toSorted((a, b) => b - a))
    for (const item of report.breaks) {
      const { index, api: itemApi, promptChars, uncachedChars, bestMatch, divergence, changes } = line(item.index)
      expect(item).toEqual({ index, api: itemApi, promptChars, uncachedChars, bestMatch, divergence, changes })
    }
    expect(report.totals).toMatchObject({ requests: 9, breaks: 4 })
  })

  it('gives the same diagnosis from the bare bodies, telling the API by shape', async () => {
    const bare = join(directory, `${api}-bare.jsonl`)
    await writeFile(
      bare,
      recorded.log
        .trim()
        .split('\n')
        .map((text) => JSON.stringify((JSON.parse(text) as { body: unknown }).body))
        .join('\n'),
    )
    const fromBodies = await diagnose(bare)
    // Gemini bodies do not name their model (only the URL does) and bare bodies carry no time.
    expect(withoutModel(fromBodies.requests)).toEqual(withoutModel(report.requests))
    expect(fromBodies.breaks).toEqual(report.breaks)
  })
})
