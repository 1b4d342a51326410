import { startLlamaCacheServer } from '@warmfold/llama-cache-server'
import { CacheProbe, runProbedWorkload } from '@warmfold/prefix-cache-testkit'

export async function main(steps = 60) {
  const server = await startLlamaCacheServer({ contextSize: 65536 })
  try {
    const run = await runProbedWorkload(
      { window: 8000, steps, strategy: 'warmfold' },
      new CacheProbe({ baseURL: server.baseURL }),
    )
    return {
      summaryCalls: run.summaryCalls, // prompt / cached / uncached tokens as llama.cpp reported them
      conversation: run.conversation, // the conversation requests, the same way
      simulated: run.simulated, // the simulator's observations of the same requests (divergence, rewrites)
      completed: run.completed,
    }
  } finally {
    await server.close()
  }
}
