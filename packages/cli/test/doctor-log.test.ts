import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DoctorReport } from '../src/index.ts'
import { DOCTOR_USAGE, MAX_JSON_DEPTH, parseLogLine, RequestDoctor, runCli, USAGE } from '../src/index.ts'

let directory: string
let counter = 0

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-doctor-log-'))
})
afterAll(async () => {
  await rm(directory, { recursive: true, force: true })
})

async function logFile(lines: readonly (string | object)[], name = `log-${++counter}.jsonl`): Promise<string> {
  const file = join(directory, name)
  await writeFile(file, lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n'))
  return file
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

/** Diagnoses bodies given in memory, one per line. */
function diagnoseBodies(lines: readonly object[]): DoctorReport {
  const requestDoctor = new RequestDoctor()
  lines.forEach((line, index) => requestDoctor.add(parseLogLine(JSON.stringify(line), index + 1)))
  return requestDoctor.report()
}

/**
 * A line whose tool schema nests arrays until its objects and arrays reach `depth` levels, written
 * as text (JSON.stringify itself would overflow the stack on the deepest).
 */
function nested(depth: number): string {
  return JSON.stringify(
    chat([ask], {
      tools: [{ type: 'function', function: { name: 'deep', parameters: { type: 'object', default: 'NESTED' } } }],
    }),
  ).replace('"NESTED"', `${'['.repeat(depth - 5)}1${']'.repeat(depth - 5)}`)
}

const chat = (messages: object[], extra: object = {}) => ({
  model: 'gpt-test',
  messages: [{ role: 'system', content: 'Be brief.' }, ...messages],
  ...extra,
})
const ask = { role: 'user', content: 'What does the kettle timer round to?' }
const answer = { role: 'assistant', content: 'Whole seconds, upwards.' }

describe('warmfold doctor reads a log line by line', () => {
  it('reports every unreadable line with its number and why, and diagnoses the others', async () => {
    const file = await logFile([
      chat([ask]),
      '   ',
      '{"model": "gpt-test", "messages": [',
      '[1, 2]',
      { body: 5 },
      { body: chat([ask, answer]), t: 'noon' },
      { prompt: 'hello' },
      { model: 'gpt-test', messages: 'hello' },
      {
        body: JSON.stringify(chat([ask, answer, { role: 'user', content: 'And down?' }])),
        url: 'https://api.example.invalid/v1/chat/completions',
      },
    ])
    const result = await doctor([file, '--json'])
    expect(result.code).toBe(0)
    const report = JSON.parse(result.stdout) as DoctorReport
    expect(report.requests.map((request) => request.index)).toEqual([1, 9])
    expect(report.unreadable.map((line) => line.index)).toEqual([3, 4, 5, 6, 7, 8])
    const reasons = report.unreadable.map((line) => line.reason)
    expect(reasons[0]).toMatch(/^not JSON \(.+\): \{"model": "gpt-test", "messages": \[$/)
    expect(reasons.slice(1)).toEqual([
      'not a JSON object but an array',
      '"body" must be the request body (a JSON object), got number 5',
      '"t" must be a number of milliseconds, got the string "noon"',
      'the body has none of "messages" (OpenAI Chat Completions, Anthropic Messages), "input" (OpenAI Responses) or "contents" (Gemini)',
      'not a valid openai-chat body (detected by shape): messages must be an array, got the string "hello"',
    ])
    expect(result.stderr).toBe(`warmfold doctor: 6 unreadable lines in ${file}: 3, 4, 5, 6, 7, 8 (see "unreadable")\n`)
    // The string body was parsed; line 9 extends line 1.
    expect(report.requests[1]).toMatchObject({
      bestMatch: 1,
      changes: [],
      divergence: { part: 'messages', messageIndex: 2, role: 'assistant' },
    })
  })

  it('prints the unreadable lines in the terminal report too', async () => {
    const file = await logFile([chat([ask]), 'not json'])
    const result = await doctor([file])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain(`warmfold doctor: ${file}: 1 request (openai-chat 1), 1 unreadable line`)
    expect(result.stdout).toMatch(/unreadable line 2: not JSON \(.+\): not json/)
  })

  it('exits 1 when no line holds a readable request, listing each line on stderr', async () => {
    const file = await logFile(['nope', { messages: [], max_tokens: 10 }])
    const result = await doctor([file])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain(`${file}:1: not JSON`)
    expect(result.stderr).toContain(`${file}:2: the body could be OpenAI Chat Completions or Anthropic Messages`)
    expect(result.stderr).toContain(`warmfold: "${file}" holds no readable request (2 unreadable lines, listed above)`)
    const empty = await logFile([''])
    expect((await doctor([empty])).stderr).toBe(`warmfold: "${empty}" holds no readable request (it is empty)\n`)
  })

  it('refuses a missing log, a folder, bad flags and an unwritable --html before reading, with exit 2', async () => {
    const file = await logFile([chat([ask])])
    const cases: [string[], string][] = [
      [[], 'warmfold doctor needs the request log: warmfold doctor REQUESTS.jsonl [--json] [--html FILE]'],
      [
        [join(directory, 'missing.jsonl')],
        `cannot read the request log "${join(directory, 'missing.jsonl')}": no such file`,
      ],
      [[directory], `the request log "${directory}" is not a file`],
      [[file, '--pretty'], 'unknown flag "--pretty"; run warmfold doctor --help for the flags'],
      [[file, file], `warmfold doctor reads one request log, got "${file}" and "${file}"`],
      [[file, '--html'], '--html needs a file name'],
      [[file, '--json=yes'], '--json takes no value, got "--json=yes"'],
      [
        [file, '--html', join(directory, 'no-such-folder', 'page.html')],
        `--html "${join(directory, 'no-such-folder', 'page.html')}": the folder ${join(directory, 'no-such-folder')} does not exist (warmfold doctor does not create folders; create it first)`,
      ],
      [[file, '--html', directory], `--html "${directory}" is a folder; name a file to write the HTML page to`],
    ]
    for (const [argv, message] of cases) {
      const result = await doctor(argv)
      expect(result, JSON.stringify(argv)).toMatchObject({ code: 2, stdout: '', stderr: `warmfold: ${message}\n` })
    }
  })

  it('--help prints the usage, and the top-level usage names the command', async () => {
    expect(await doctor(['--help'])).toEqual({ code: 0, stdout: `${DOCTOR_USAGE}\n`, stderr: '' })
    expect(USAGE).toContain('doctor         find every prefix-cache break')
  })

  it('a line nested deeper than the limit is a bad line naming its number, not a stack overflow; a body at the limit is diagnosed', async () => {
    const file = await logFile([
      nested(MAX_JSON_DEPTH),
      nested(MAX_JSON_DEPTH + 1),
      `{"body": ${JSON.stringify(nested(100_000))}}`,
      nested(100_000),
    ])
    const result = await doctor([file, '--json'])
    expect(result.code).toBe(0)
    const report = JSON.parse(result.stdout) as DoctorReport
    expect(report.requests.map((request) => request.index)).toEqual([1])
    expect(report.unreadable.map((line) => [line.index, line.reason.replace(/: \{.*$/, '')])).toEqual([
      [2, 'objects and arrays nested deeper than 1000 levels; no API takes such a body'],
      [3, '"body" holds objects and arrays nested deeper than 1000 levels; no API takes such a body'],
      [4, 'objects and arrays nested deeper than 1000 levels; no API takes such a body'],
    ])
    expect(result.stderr).toBe(`warmfold doctor: 3 unreadable lines in ${file}: 2, 3, 4 (see "unreadable")\n`)
    const only = await logFile([nested(100_000)])
    const refused = await doctor([only])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(`${only}:1: objects and arrays nested deeper than 1000 levels`)
  })

  it('prints control characters from the log as escapes, so a log cannot send escape sequences to the terminal', async () => {
    const hostile = 'gpt\u001b]0;pwned\u0007\u001b[2J\u009b31m'
    const file = await logFile([chat([ask], { model: hostile }), `{"model": "x\u001b[31m", "messages": [`])
    const text = await doctor([file])
    expect(text.code).toBe(0)
    const json = await doctor([file, '--json'])
    for (const output of [text.stdout, text.stderr, json.stdout, json.stderr]) {
      // oxlint-disable-next-line no-control-regex -- matching control characters is the point
      expect(output).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/)
    }
    expect(text.stdout).toContain('gpt\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m')
    // The JSON document still holds the model as the log has it.
    expect((JSON.parse(json.stdout) as DoctorReport).requests[0]?.model).toBe(hostile)
  })

  it('reads lines longer than any stream chunk and CRLF line ends', async () => {
    const long = 'x'.repeat(300_000)
    const file = join(directory, 'crlf.jsonl')
    await writeFile(
      file,
      `${JSON.stringify(chat([{ role: 'user', content: long }]))}\r\n${JSON.stringify(chat([{ role: 'user', content: long }, answer]))}\r\n`,
    )
    const report = JSON.parse((await doctor([file, '--json'])).stdout) as DoctorReport
    expect(report.unreadable).toEqual([])
    expect(report.requests[1]).toMatchObject({ bestMatch: 1, changes: [] })
    expect(report.requests[1]?.cachedChars).toBe(report.requests[0]?.promptChars)
    expect(report.requests[0]?.promptChars).toBeGreaterThan(300_000)
  })
})

describe('warmfold doctor tells the API', () => {
  const anthropicBody = { model: 'claude-test', max_tokens: 100, system: 'Be brief.', messages: [ask] }
  const plain = { model: 'any', max_tokens: 100, messages: [ask] }

  it('by the URL path first, then by the shape', () => {
    const report = diagnoseBodies([
      { body: plain, url: 'http://127.0.0.1:9/v1/chat/completions' },
      { body: plain, url: '/v1/messages?beta=true' },
      { body: { input: 'hi', model: 'gpt-test' }, url: '/proxy/v1/responses' },
      {
        body: { contents: [{ parts: [{ text: 'hi' }] }] },
        url: '/v1beta/models/gemini-flash-test:streamGenerateContent?alt=sse',
      },
      anthropicBody,
      { model: 'gpt-test', input: [ask] },
      { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
      chat([ask]),
      { body: plain, url: '/v1/unknown-endpoint', headers: { 'Anthropic-Version': '2023-06-01' } },
    ])
    expect(report.unreadable).toEqual([])
    expect(report.requests.map((request) => request.api)).toEqual([
      'openai-chat',
      'anthropic-messages',
      'openai-responses',
      'gemini',
      'anthropic-messages',
      'openai-responses',
      'gemini',
      'openai-chat',
      'anthropic-messages',
    ])
    expect(report.requests[3]?.model).toBe('gemini-flash-test')
    expect(report.requests[6]?.model).toBeNull()
  })

  it('a plain messages body with max_tokens takes the API of the line before it, and is unreadable without one', () => {
    const report = diagnoseBodies([plain, anthropicBody, plain, chat([ask]), plain, { model: 'any', messages: [ask] }])
    expect(report.unreadable).toEqual([
      {
        index: 1,
        reason:
          'the body could be OpenAI Chat Completions or Anthropic Messages (plain messages and max_tokens, no field only one of them has, no earlier line to go by); record the request url',
      },
    ])
    expect(report.requests.map((request) => [request.index, request.api])).toEqual([
      [2, 'anthropic-messages'],
      [3, 'anthropic-messages'],
      [4, 'openai-chat'],
      [5, 'openai-chat'],
      // Anthropic requires max_tokens: without it, only Chat Completions is left.
      [6, 'openai-chat'],
    ])
  })

  it('a body mixing both chat APIs is unreadable, naming the fields', () => {
    const report = diagnoseBodies([{ ...anthropicBody, reasoning_effort: 'low' }])
    expect(report.unreadable[0]?.reason).toBe(
      'the body mixes Anthropic Messages fields (system) with OpenAI Chat Completions fields (reasoning_effort); record the request url to say which API it was sent to',
    )
  })
})

describe('warmfold doctor ignores per-request noise and names every setting', () => {
  it('key order, string or part content, null fields and cache_control markers are not changes', () => {
    const first = {
      messages: [{ content: 'Be brief.', role: 'system' }, ask],
      model: 'gpt-test',
      temperature: 0.2,
      user: 'a',
      seed: 1,
      max_tokens: 10,
    }
    const second = chat(
      [
        {
          role: 'user',
          content: [{ type: 'text', text: ask.content, cache_control: { type: 'ephemeral' } }],
          name: null,
        },
        answer,
        { role: 'user', content: 'Thanks.' },
      ],
      {
        temperature: 0.2,
        user: 'b',
        seed: 2,
        stream: true,
        stream_options: { include_usage: true },
        metadata: { run: 'x' },
        n: 1,
      },
    )
    const report = diagnoseBodies([first, second])
    expect(report.requests[1]).toMatchObject({
      bestMatch: 1,
      changes: [],
      divergence: { part: 'messages', messageIndex: 2 },
    })
    expect(report.requests[1]?.cachedChars).toBe(report.requests[0]?.promptChars)
  })

  it('a setting the doctor does not know keeps its own name and splits the family', () => {
    const report = diagnoseBodies([
      chat([ask], { verbosity: 'low' }),
      chat([ask, answer], { verbosity: 'high', temperature: 1 }),
    ])
    expect(report.requests[1]).toMatchObject({
      cachedChars: 0,
      divergence: { part: 'envelope', field: 'temperature' },
      changes: ['envelope:temperature', 'envelope:verbosity'],
    })
  })

  it('every changed part is listed, with the first divergence in prompt order', () => {
    const tools = [{ type: 'function', function: { name: 'read', parameters: { type: 'object' } } }]
    const history = [
      ask,
      answer,
      { role: 'user', content: 'Now make it round down.' },
      { role: 'assistant', content: 'Done.' },
    ]
    const report = diagnoseBodies([
      chat(history, { tools }),
      {
        model: 'gpt-test',
        messages: [
          { role: 'system', content: 'Summarize.' },
          { ...ask, content: 'Rewritten question.' },
          ...history.slice(1),
          { role: 'user', content: 'Summary please.' },
        ],
      },
    ])
    expect(report.requests[1]).toMatchObject({
      bestMatch: 1,
      divergence: { part: 'tools', toolIndex: 0, charOffset: 0 },
      changes: ['tools', 'system', 'messages'],
    })
  })

  it('a request that only repeats an earlier prompt is fully cached and diverges nowhere', () => {
    const report = diagnoseBodies([chat([ask, answer]), chat([ask])])
    expect(report.requests[1]).toMatchObject({
      bestMatch: 1,
      changes: [],
      divergence: { part: 'none' },
      uncachedChars: 0,
    })
    expect(report.requests[1]?.divergence.charOffset).toBe(report.requests[1]?.promptChars)
  })

  it('reports idle time since the best match when lines carry t', () => {
    const report = diagnoseBodies([
      { body: chat([ask]), t: 1_000 },
      { body: chat([ask, answer]), t: 361_000 },
      chat([ask, answer, ask]),
    ])
    expect(report.requests[1]?.idleMs).toBe(360_000)
    expect(report.requests[2]).not.toHaveProperty('idleMs')
  })
})

describe('warmfold doctor --html', () => {
  it('writes one self-contained page with every text escaped, alongside the terminal report', async () => {
    const page = join(directory, 'page.html')
    const file = await logFile(
      [
        chat([ask], { model: '<script>alert(1)</script>' }),
        chat([{ role: 'user', content: 'other' }, answer], {
          model: '<script>alert(1)</script>',
          tools: [{ type: 'function', function: { name: 'f' } }],
        }),
        '<b>not json</b>',
      ],
      'a&b.jsonl',
    )
    const result = await doctor([file, '--html', page])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('Breaks (1), most uncached first:')
    const html = await readFile(page, 'utf8')
    expect(html).not.toMatch(/<script|<b>|src=|href=|@import|url\(/)
    expect(html).toContain('&#60;script&#62;alert(1)&#60;/script&#62;')
    expect(html).toContain('a&#38;b.jsonl')
    expect(html).toContain('line 3: not JSON')
    expect(html.match(/<div class="bar"/g)).toHaveLength(2)
  })

  it('an unwritable --html is refused before the log is read', async () => {
    const file = await logFile([chat([ask])])
    const result = await doctor([file, '--html', join(file, 'page.html')])
    expect(result).toMatchObject({ code: 2, stdout: '' })
    expect(result.stderr).toBe(`warmfold: --html "${join(file, 'page.html')}": ${file} is not a folder\n`)
  })
})
