import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    projects: ['packages/{llm,core,compaction,testing}/*', 'packages/storage/*', 'packages/cli', 'scripts'],
    // vitest runs cores − 1 files at once, so one at a time on 2 cores; most files spend their
    // time importing modules or waiting on child processes and local servers, so two at a time
    // take about a third less wall time there (measured in the README's "Working on warmfold").
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
})
