import type { startLlamaCacheServer } from '@warmfold/llama-cache-server'
import { RunError } from './run-error.ts'

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
 *   to load when it is installed but broken (e.g. its own node-llama-cpp is missing).
 */
export async function loadLlamaCacheServer(specifier: string = LLAMA_CACHE_SERVER_PACKAGE): Promise<LlamaCacheServerModule> {
  try {
    return (await import(specifier)) as LlamaCacheServerModule
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException
    if (code === 'ERR_MODULE_NOT_FOUND' && message.includes(`'${specifier}'`)) {
      throw new RunError(`--cache llama needs the optional package ${specifier} (node-llama-cpp with a prebuilt llama.cpp), which is not installed: npm install ${specifier}`, { cause: error })
    }
    throw new RunError(`--cache llama: ${specifier} is installed but failed to load: ${message}`, { cause: error })
  }
}
