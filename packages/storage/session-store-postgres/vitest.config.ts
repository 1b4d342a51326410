import { defineProject } from 'vitest/config'

// Every test here talks to a real PostgreSQL server, which the global setup starts for this
// project only (other packages' tests never pay for it).
export default defineProject({
  test: {
    globalSetup: ['@warmfold/test-utils/postgres-global-setup'],
    // Child processes start through tsx and crashed holders' leases expire: seconds on 2 busy cores.
    testTimeout: 60_000,
  },
})
