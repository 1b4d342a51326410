import type { startLlamaCacheServer } from '@warmfold/llama-cache-server'
import { loadOptionalPackage } from '../shared/load-optional-package.ts'

/** The package `--cache llama` needs: an optional peer of the CLI, installed on its own. */
export const LLAMA_CACHE_SERVER_PACKAGE = '@warmfold/llama-cache-server'

/** What the bench uses of `@warmfold/llama-cache-server`. */
export interface LlamaCacheServerModule {
  readonly startLlamaCacheServer: typeof startLlamaCacheServer
}

/**
 * Imports the real-cache package for `--cache llama`. It is an optional peer, loaded only
 * here: node-llama-cpp and its llama.cpp binaries weigh hundreds of MB, which a plain
 * `npm install @warmfold/cli` (simulator and probe) must not pull.
 * @param specifier the package to import; tests pass another name.
 * @throws RunError naming the package to install when it is missing, or quoting why it failed
 *   to load when it is installed but broken (e.g. its own node-llama-cpp is missing); see
 *   {@link loadOptionalPackage}.
 */
export function loadLlamaCacheServer(specifier: string = LLAMA_CACHE_SERVER_PACKAGE): Promise<LlamaCacheServerModule> {
  return loadOptionalPackage<LlamaCacheServerModule>(
    specifier,
    '--cache llama',
    'node-llama-cpp with a prebuilt llama.cpp',
  )
}
