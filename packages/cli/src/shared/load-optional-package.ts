import { RunError } from './run-error.ts'

/**
 * Imports an optional peer of the CLI, which a plain `npm install @warmfold/cli` does not pull:
 * the real-cache package of `--cache llama`, or the adapter of a `--probe-dialect`.
 * @param specifier the package to import.
 * @param flag the flag that needs it, e.g. `--cache llama`; it starts every error message.
 * @param what what the package brings, shown in parentheses when it is missing.
 * @throws RunError naming the package and the command to install it when it is missing, or
 *   quoting why it failed to load when it is installed but broken (one of its own imports).
 */
export async function loadOptionalPackage<T>(specifier: string, flag: string, what: string): Promise<T> {
  try {
    return (await import(specifier)) as T
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException
    if (code === 'ERR_MODULE_NOT_FOUND' && message.includes(`'${specifier}'`)) {
      throw new RunError(
        `${flag} needs the optional package ${specifier} (${what}), which is not installed: npm install ${specifier}`,
        { cause: error },
      )
    }
    throw new RunError(`${flag}: ${specifier} is installed but failed to load: ${message}`, { cause: error })
  }
}
