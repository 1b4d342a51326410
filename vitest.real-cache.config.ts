import { defineConfig } from 'vitest/config'

// `pnpm test:real-cache`: the full real-cache proof, which `pnpm test` and `pnpm test:heavy` leave
// out for time (see REAL_CACHE_PROOF in vitest.config.ts). CI (.ci/run) runs all three.
export default defineConfig({
  test: {
    include: ['packages/testing/prefix-cache-testkit/test/real-cache-proof.test.ts'],
  },
})
