import { Context } from '@cordisjs/core'

/** A cordis Context that records every `internal/warning` and `internal/error`. */
export interface TestContext {
  readonly ctx: Context
  /** Formatted warnings, in order. */
  readonly warnings: string[]
  /** Errors (or formatted messages), in order. */
  readonly errors: unknown[]
  /** Throws when any warning or error was recorded, listing them. */
  assertClean(): void
  /** Stops the context (unloads every plugin). */
  dispose(): Promise<void>
}

/**
 * Creates a started Context whose internal warnings and errors are recorded instead of
 * printed. Tests call `assertClean()` (usually in `afterEach`) so a missing inject, a bad
 * config or a duplicate service fails the test that caused it.
 */
export async function createTestContext(): Promise<TestContext> {
  const ctx = new Context()
  const warnings: string[] = []
  const errors: unknown[] = []
  ctx.on('internal/warning', (format: unknown, ...params: unknown[]) => {
    warnings.push([format, ...params].map(String).join(' '))
  })
  ctx.on('internal/error', (format: unknown, ...params: unknown[]) => {
    errors.push(params.length ? [format, ...params].map(String).join(' ') : format)
  })
  await ctx.start()
  return {
    ctx,
    warnings,
    errors,
    assertClean() {
      if (warnings.length || errors.length) {
        const lines = [
          ...warnings.map((warning) => `warning: ${warning}`),
          ...errors.map((error) => `error: ${describe(error)}`),
        ]
        throw new Error(`the cordis context reported problems:\n${lines.join('\n')}`)
      }
    },
    async dispose() {
      await ctx.stop()
    },
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error)
}
