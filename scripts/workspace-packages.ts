import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'

/** A package of the workspace, as its manifest says. */
export interface WorkspacePackage {
  /** Folder relative to the repository root, with `/` (`packages/core/session`). */
  readonly folder: string
  readonly name: string
  readonly version: string
  /** `private: true`: never packed or published. */
  readonly private: boolean
  readonly manifest: Record<string, unknown>
}

/**
 * The packages under `packages/` of the repository at `root`, one or two folders deep (the
 * `pnpm-workspace.yaml` globs `packages/*\/*` and `packages/cli`), sorted by folder.
 */
export async function workspacePackages(root: string): Promise<WorkspacePackage[]> {
  const found: WorkspacePackage[] = []
  const visit = async (folder: string, depth: number): Promise<void> => {
    const manifestPath = join(root, folder, 'package.json')
    if (existsSync(manifestPath)) {
      const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as Record<string, unknown>
      found.push({
        folder,
        name: String(manifest.name),
        version: String(manifest.version),
        private: manifest.private === true,
        manifest,
      })
      return
    }
    if (depth === 2) return
    for (const entry of await readdir(join(root, folder), { withFileTypes: true })) {
      if (entry.isDirectory() && entry.name !== 'node_modules' && !entry.name.startsWith('.'))
        await visit(`${folder}/${entry.name}`, depth + 1)
    }
  }
  await visit('packages', 0)
  return found.toSorted((a, b) => a.folder.localeCompare(b.folder))
}
