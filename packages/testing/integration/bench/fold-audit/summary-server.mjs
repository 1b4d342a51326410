// A chat completions endpoint for bench/real-fold.bench.ts, in its own process so that its CPU
// is not the host's: every POST is read whole, then answered with the summary the parent sent
// (`{ summary, tokenChars }` over IPC), streamed one token-sized chunk at a time as a provider
// streams it, then usage and `[DONE]`. Replies `{ port }` once it listens on 127.0.0.1.
import { createServer } from 'node:http'

let summary = ''
let tokenChars = 4
const server = createServer((request, response) => {
  let size = 0
  request.on('data', (chunk) => (size += chunk.length))
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    const send = (chunk) => response.write(`data: ${JSON.stringify(chunk)}\n\n`)
    const base = { id: 'bench', object: 'chat.completion.chunk', created: 0, model: 'coder' }
    send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })
    for (let at = 0; at < summary.length; at += tokenChars)
      send({
        ...base,
        choices: [{ index: 0, delta: { content: summary.slice(at, at + tokenChars) }, finish_reason: null }],
      })
    send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })
    const completion = Math.ceil(summary.length / tokenChars)
    send({
      ...base,
      choices: [],
      usage: {
        prompt_tokens: Math.ceil(size / 4),
        completion_tokens: completion,
        total_tokens: Math.ceil(size / 4) + completion,
      },
    })
    response.end('data: [DONE]\n\n')
  })
})
process.on('message', (message) => {
  summary = message.summary
  tokenChars = message.tokenChars
  if (!server.listening) server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))
})
process.on('disconnect', () => server.close(() => process.exit(0)))
