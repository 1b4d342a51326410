import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    projects: ['packages/{llm,core,compaction,testing}/*', 'packages/cli', 'scripts'],
  },
})
