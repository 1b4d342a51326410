import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { redactHeaders, redactUrl } from '../../src/redact-headers.ts'
import type { AgentRun, AgentSpec } from './run-agent.ts'

/** `packages/bridges/proxy/test/fixtures`. */
export const FIXTURES_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures')

/** Set to `1` to (re)write an agent's fixtures from its heavy-set run. */
export const RECORD_FIXTURES = process.env.WARMFOLD_RECORD_AGENT_FIXTURES === '1'

/** One recorded request as a fixture file holds it. */
export interface AgentFixture {
  readonly method: string
  /** Path and query; a `key=` credential in the query is redacted. */
  readonly url: string
  /** Lower-case headers as sent, credential values redacted. */
  readonly headers: Readonly<Record<string, string>>
  /** The parsed JSON body. */
  readonly body: unknown
  /** Whether `JSON.stringify(body)` gives the bytes the agent sent (false: `rawBody` holds them). */
  readonly bodyIsCompactJson: boolean
  readonly rawBody?: string
}

/**
 * Writes every request of `run` to `fixtures/<name>-<version>/NN-<kind>.json` and a README saying how
 * they were recorded, replacing what was there.
 */
export function writeAgentFixtures(spec: AgentSpec, run: AgentRun, notes: readonly string[]): string {
  const name = spec.fixtureName ?? spec.name
  const dir = join(FIXTURES_DIR, `${name}-${spec.version}`)
  mkdirSync(dir, { recursive: true })
  for (const file of readdirSync(dir)) if (file.endsWith('.json')) rmSync(join(dir, file))
  const lines: string[] = []
  for (const entry of run.requests) {
    const request = entry.request
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(request.headers))
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value)
    const compact = request.json !== undefined && JSON.stringify(request.json) === request.body
    const fixture: AgentFixture = {
      method: request.method,
      url: redactUrl(request.url),
      headers: redactHeaders(headers),
      body: request.json ?? request.body,
      bodyIsCompactJson: compact,
      ...(compact ? {} : { rawBody: request.body }),
    }
    const file = `${String(entry.index).padStart(2, '0')}-${entry.kind}.json`
    writeFileSync(join(dir, file), `${JSON.stringify(fixture)}\n`)
    lines.push(`| \`${file}\` | ${request.method} \`${redactUrl(request.url)}\` | ${request.body.length} |`)
  }
  const readme = [
    `# ${spec.pkg}@${spec.version}: one recorded run`,
    '',
    `Recorded by \`packages/bridges/proxy/test/agents-${name}.test.ts\` (heavy set) against the scripted`,
    'upstream of `test/agents/scripted-agent-server.ts`, directly (no proxy):',
    '',
    '```sh',
    `WARMFOLD_RECORD_AGENT_FIXTURES=1 WARMFOLD_TEST_SET=heavy npx vitest run packages/bridges/proxy/test/agents-${name}.test.ts`,
    '```',
    '',
    'The agent was started as (temp HOME and workspace; settings written by the spec in',
    `\`test/agents/${spec.name}.ts\`):`,
    '',
    '```sh',
    run.command,
    '```',
    '',
    ...notes,
    '',
    'Each file: `{method, url, headers, body, bodyIsCompactJson, rawBody?}`; credential headers are',
    '`[redacted]`. `body` is the parsed JSON; when `bodyIsCompactJson` is true, `JSON.stringify(body)` is',
    'the exact bytes the agent sent, else `rawBody` holds them.',
    '',
    '| file | request | body bytes |',
    '|---|---|---|',
    ...lines,
    '',
  ]
  writeFileSync(join(dir, 'README.md'), readme.join('\n'))
  return dir
}
