import { defineProject } from 'vitest/config'

// The PostgreSQL harness runs the contract against a real server, started once for this project.
export default defineProject({
  test: {
    globalSetup: ['@warmfold/test-utils/postgres-global-setup'],
  },
})
