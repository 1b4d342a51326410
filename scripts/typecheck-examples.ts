/**
 * Typechecks every README example (`packages/<group>/<package>/examples/*.ts`) the way a strict
 * host compiles it: `tsconfig.examples.json` adds `exactOptionalPropertyTypes` (an optional field
 * may be absent but never `undefined`) to the workspace's settings. Only errors in the example
 * files count: the examples import the packages' `src`, which is not written for that setting,
 * while a host compiles against their declarations, never their bodies. `pnpm typecheck` runs it
 * after the workspace's own `tsc`.
 *
 *   tsx scripts/typecheck-examples.ts
 */
import { dirname, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const configFile = `${root}/tsconfig.examples.json`

/** The diagnostics of the example files under `root`, compiled with `tsconfig.examples.json`. */
export function exampleDiagnostics(): { files: string[]; diagnostics: ts.Diagnostic[] } {
  const host: ts.ParseConfigFileHost = {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
    },
  }
  const config = ts.getParsedCommandLineOfConfigFile(configFile, {}, host)
  if (!config) throw new Error(`cannot read ${configFile}`)
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options })
  const files = config.fileNames.filter((file) => file.split('/').join(sep).includes(`${sep}examples${sep}`))
  const diagnostics = [
    ...config.errors,
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...files.flatMap((file) => {
      const source = program.getSourceFile(file)
      return source ? [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)] : []
    }),
  ]
  return { files, diagnostics }
}

const { files, diagnostics } = exampleDiagnostics()
if (diagnostics.length) {
  const formatHost: ts.FormatDiagnosticsHost = {
    getCanonicalFileName: (name) => name,
    getCurrentDirectory: () => root,
    getNewLine: () => '\n',
  }
  console.error(ts.formatDiagnostics(diagnostics, formatHost).trimEnd())
  console.error(
    `typecheck-examples: ${diagnostics.length} error(s) in README examples compiled with ${relative(root, configFile)} (exactOptionalPropertyTypes, as a strict host compiles them)`,
  )
  process.exitCode = 1
} else {
  console.log(`typecheck-examples: ${files.length} example files compile with ${relative(root, configFile)}`)
}
