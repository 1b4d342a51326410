import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { RunError } from './shared/run-error.ts'

/** The name the manifest read by {@link cliVersion} must carry. */
export const CLI_PACKAGE_NAME = '@warmfold/cli'

/**
 * The version of `@warmfold/cli`, read at run time from the manifest one folder above the module
 * that holds this code: `packages/cli/src/` in the workspace, and `dist/` in an installed package
 * (tsup writes every entry and chunk there), so both find the package's own `package.json`. Read
 * rather than bundled, so the version printed is the one installed, never a stale build's.
 * @param moduleURL where this code runs from; defaults to this module.
 * @throws RunError naming the manifest's path when it cannot be read or is not this package's.
 */
export function cliVersion(moduleURL: string | URL = import.meta.url): string {
  const path = fileURLToPath(new URL('../package.json', moduleURL))
  let manifest: { name?: unknown; version?: unknown }
  try {
    manifest = JSON.parse(readFileSync(path, 'utf8')) as { name?: unknown; version?: unknown }
  } catch (error) {
    throw new RunError(`cannot read the version of ${CLI_PACKAGE_NAME} from ${path}: ${(error as Error).message}`, {
      cause: error,
    })
  }
  if (manifest.name !== CLI_PACKAGE_NAME || typeof manifest.version !== 'string' || manifest.version === '') {
    throw new RunError(
      `${path} is not the manifest of ${CLI_PACKAGE_NAME} ` +
        `(name ${JSON.stringify(manifest.name)}, version ${JSON.stringify(manifest.version)})`,
    )
  }
  return manifest.version
}
