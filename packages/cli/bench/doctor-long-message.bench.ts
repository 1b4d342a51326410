import { createWriteStream, mkdtempSync, rmSync } from 'node:fs'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, bench, describe } from 'vitest'
import { runCli } from '../src/index.ts'

/**
 * `warmfold doctor` on logs whose requests differ only inside one long message: every request
 * sends the same system prompt and one user message of about 100 KB that differs from every
 * other request's only near its end (an agent that rewrites one large pasted file, or a harness
 * that replays one document with a changing tail). All those messages are siblings at the same
 * depth of the prefix trie, so a request must find the one it shares most characters with among
 * every earlier one; time must grow with the log's characters, not with requests × characters:
 * 200 requests should cost about twice what 100 cost, not four times.
 */
const directory = mkdtempSync(join(tmpdir(), 'warmfold-doctor-long-message-bench-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

const MESSAGE_CHARS = 100_000
const SYSTEM = 'You are a careful coding agent.'

async function writeLog(requests: number): Promise<string> {
  const file = join(directory, `long-message-${requests}.jsonl`)
  const out = createWriteStream(file)
  const body = 'All of the pasted document, line after line, the same in every request. '
    .repeat(Math.ceil(MESSAGE_CHARS / 72))
    .slice(0, MESSAGE_CHARS - 40)
  for (let index = 0; index < requests; index++) {
    // The same 100 KB but for a short tail of its own, so every request shares almost the whole message with every earlier one.
    const content = `${body} revision ${index} ${'x'.repeat(index % 7)}`
    const request = {
      model: 'gpt-bench',
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content },
      ],
    }
    if (!out.write(`${JSON.stringify(request)}\n`)) await once(out, 'drain')
  }
  out.end()
  await once(out, 'close')
  return file
}

const io = { stdout: () => undefined, stderr: (text: string) => void process.stderr.write(`${text}\n`) }
const hundred = await writeLog(100)
const twoHundred = await writeLog(200)
const thousand = await writeLog(1000)

describe('warmfold doctor, requests that differ only inside one 100 KB message', () => {
  const options = { iterations: 1, time: 0, warmupIterations: 0 }
  bench(
    '100 requests (10 MB)',
    async () => {
      if ((await runCli(['doctor', hundred, '--json'], io)) !== 0) throw new Error('doctor failed')
    },
    options,
  )
  bench(
    '200 requests (20 MB)',
    async () => {
      if ((await runCli(['doctor', twoHundred, '--json'], io)) !== 0) throw new Error('doctor failed')
    },
    options,
  )
  bench(
    '1000 requests (100 MB)',
    async () => {
      if ((await runCli(['doctor', thousand, '--json'], io)) !== 0) throw new Error('doctor failed')
    },
    options,
  )
})
