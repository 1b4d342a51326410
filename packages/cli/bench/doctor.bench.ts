import { createWriteStream, mkdtempSync, rmSync } from 'node:fs'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, bench, describe } from 'vitest'
import { runCli } from '../src/index.ts'

/**
 * `warmfold doctor` on long logs of long prompts: one agent session whose every request is a
 * Chat Completions body of 100k+ characters (tools, a long system prompt, a growing history),
 * with a pruning rewrite and a summary call every 100 requests. Time grows with the log's size
 * (characters and segments), never with requests × characters: doubling every message's length
 * (twice the characters, same segments) must cost at most about twice the time, and doubling the
 * requests (each one a message longer than the last: 3.9× the segments) about 3.9×.
 */
const directory = mkdtempSync(join(tmpdir(), 'warmfold-doctor-bench-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

const TOOLS = Array.from({ length: 12 }, (_, index) => ({
  type: 'function',
  function: {
    name: `tool_${index}`,
    description: `Tool ${index}. ${'Does one careful thing. '.repeat(20)}`,
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
  },
}))
const SYSTEM = (scale: number) =>
  `You are a careful coding agent. ${'Follow the repository conventions and explain each change. '.repeat(300 * scale)}`

async function writeLog(requests: number, scale = 1): Promise<string> {
  const file = join(directory, `session-${requests}-${scale}.jsonl`)
  const out = createWriteStream(file)
  // About 80k characters of history to start with, then one short turn per request.
  const history: object[] = Array.from({ length: 40 }, (_, index) => ({
    role: index % 2 ? 'assistant' : 'user',
    content: `turn ${index}: ${'some earlier conversation text '.repeat(65 * scale)}`,
  }))
  for (let index = 0; index < requests; index++) {
    if (index % 100 === 99) history[5] = { role: 'assistant', content: `pruned at ${index}` }
    history.push(
      index % 2
        ? { role: 'assistant', content: `step ${index} done`.repeat(scale) }
        : { role: 'user', content: `next step ${index}`.repeat(scale) },
    )
    const summary = index % 100 === 50
    const body = {
      model: 'gpt-bench',
      reasoning_effort: 'high',
      tools: summary ? undefined : TOOLS,
      messages: [
        { role: 'system', content: SYSTEM(scale) },
        ...history,
        ...(summary ? [{ role: 'user', content: 'Summarize.' }] : []),
      ],
    }
    if (!out.write(`${JSON.stringify(body)}\n`)) await once(out, 'drain')
  }
  out.end()
  await once(out, 'close')
  return file
}

const io = { stdout: () => undefined, stderr: (text: string) => void process.stderr.write(`${text}\n`) }
const base = await writeLog(1000)
const longer = await writeLog(1000, 2)
const more = await writeLog(2000)

describe('warmfold doctor', () => {
  const options = { iterations: 1, time: 0, warmupIterations: 0 }
  bench(
    '1000 requests of 100k+ chars (128 MB)',
    async () => {
      if ((await runCli(['doctor', base, '--json'], io)) !== 0) throw new Error('doctor failed')
    },
    options,
  )
  bench(
    '1000 requests, every message twice as long (250 MB)',
    async () => {
      if ((await runCli(['doctor', longer, '--json'], io)) !== 0) throw new Error('doctor failed')
    },
    options,
  )
  bench(
    '2000 requests of 100k+ chars (300 MB, 3.9× the segments)',
    async () => {
      if ((await runCli(['doctor', more, '--json'], io)) !== 0) throw new Error('doctor failed')
    },
    options,
  )
})
