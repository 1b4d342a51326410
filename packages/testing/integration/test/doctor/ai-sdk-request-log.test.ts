import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { DoctorReport } from '@warmfold/cli'
import { runCli } from '@warmfold/cli'
import { jsonSchema, tool } from 'ai'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { main as doctorLog } from '../../../../bridges/ai-sdk/examples/doctor-log.ts'
import { ScriptedProvider } from '../../../../bridges/ai-sdk/test/scripted-provider.ts'

// The AI SDK bridge's README example (`examples/doctor-log.ts`) writes the request log that
// `warmfold doctor` (a layer above the bridge) reads: the two meet here, not in either package.
describe('the AI SDK request log and warmfold doctor', () => {
  let provider: ScriptedProvider | undefined
  afterEach(async () => {
    vi.unstubAllEnvs()
    await provider?.close()
  })

  it('doctor-log: the logging fetch writes the request log warmfold doctor reads, every request and no API key', async () => {
    vi.stubEnv('ANTHROPIC_API_KEY', 'sk-ant-example')
    provider = await ScriptedProvider.start('anthropic', 2)
    const readTool = tool({
      description: 'Read a file',
      inputSchema: jsonSchema<{ path: string }>({ type: 'object', properties: { path: { type: 'string' } } }),
      execute: async ({ path }) => `// ${path}`,
    })
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-ai-sdk-doctor-'))
    try {
      const log = join(directory, 'requests.jsonl')
      expect(await doctorLog({ read_file: readTool }, log, provider.server.baseURL)).toBe('done')
      const text = await readFile(log, 'utf8')
      expect(text).not.toContain('sk-ant-example')
      let stdout = ''
      let stderr = ''
      const code = await runCli(['doctor', log, '--json'], {
        stdout: (chunk) => void (stdout += chunk),
        stderr: (line) => void (stderr += `${line}\n`),
      })
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
      const report = JSON.parse(stdout) as DoctorReport
      expect(report.unreadable).toEqual([])
      expect(report.totals.requests).toBe(provider.requests.length)
      expect(report.requests.every((request) => request.api === 'anthropic-messages')).toBe(true)
      // Each request extends the one before it: no break in a plain tool loop.
      expect(report.breaks).toEqual([])
    } finally {
      await rm(directory, { recursive: true, force: true })
    }
  })
})
