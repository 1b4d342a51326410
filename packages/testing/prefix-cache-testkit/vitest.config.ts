import { configDefaults, defineProject } from 'vitest/config'

// The full real-cache proof takes about 45 s on 2 cores, so `pnpm test` leaves it to
// `pnpm test:real-cache` (../../../vitest.real-cache.config.ts), which CI runs too;
// `test/real-cache.test.ts` keeps a one-fold real-cache case in the default run.
export default defineProject({
  test: {
    exclude: [...configDefaults.exclude, 'test/real-cache-proof.test.ts'],
  },
})
