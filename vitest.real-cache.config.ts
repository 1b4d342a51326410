import { defineConfig } from 'vitest/config'

// `pnpm test:real-cache`: the full real-cache proof, which `pnpm test` leaves out for time (see
// packages/testing/prefix-cache-testkit/vitest.config.ts). CI (.ci/run) runs both.
export default defineConfig({
  test: {
    include: ['packages/testing/prefix-cache-testkit/test/real-cache-proof.test.ts'],
  },
})
