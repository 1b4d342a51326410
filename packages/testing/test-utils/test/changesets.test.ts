import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { findReadmes } from '../src/readme-examples.ts'

// Changesets become the CHANGELOG that people who upgrade read: they must name real published
// packages and speak about behaviour, never about the repository's insides.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..')
const folder = join(root, '.changeset')
const changesets = readdirSync(folder)
  .filter((file) => file.endsWith('.md') && file !== 'README.md')
  .toSorted()

/** Published package names of the workspace (those with a README beside their package.json and not private). */
function publishedPackages(): Set<string> {
  const names = new Set<string>()
  for (const readme of findReadmes(root)) {
    const manifest = join(dirname(readme), 'package.json')
    if (!existsSync(manifest)) continue
    const { name, private: isPrivate } = JSON.parse(readFileSync(manifest, 'utf8')) as {
      name: string
      private?: boolean
    }
    if (!isPrivate) names.add(name)
  }
  return names
}

/** What a changelog entry must not say, and why. */
const FORBIDDEN: ReadonlyArray<[RegExp, string]> = [
  [
    /internal (tidy|clean|refactor)/i,
    'an internal change is not news for users: drop the entry or fold it into one that is',
  ],
  [/no (user-visible )?behaviou?r change/i, 'an entry without a behaviour change is not news for users'],
  // A lower-case name before the extension: `install-compaction-listeners.ts`, not `Node.js`.
  [/\b[a-z][\w.-]*\.(ts|mts|js|mjs|cjs)\b/, 'a source file name means nothing to users'],
  [/\b(src|test|bench)\//, 'a repository path means nothing to users'],
  [/\bissue \d+\b/i, 'an issue number is internal; say what changed'],
]

/** The entries of a CHANGELOG.md that `changeset version` wrote: the lines under a version's heading. */
function changelogEntries(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('- ') && !line.startsWith('- Updated dependencies'))
    .map((line) => line.slice(2))
}

function problemsOf(body: string): string[] {
  return FORBIDDEN.filter(([pattern]) => pattern.test(body)).map(
    ([pattern, why]) => `${body.match(pattern)![0]}: ${why}`,
  )
}

describe('changesets and changelogs are written for the people who upgrade', () => {
  const packages = publishedPackages()

  it('finds the published packages, each with a CHANGELOG.md that names its current version', () => {
    expect(packages.has('@warmfold/llm')).toBe(true)
    expect(packages.has('@warmfold/test-utils')).toBe(false)
    for (const readme of findReadmes(root)) {
      const folderOfPackage = dirname(readme)
      const manifest = join(folderOfPackage, 'package.json')
      if (!existsSync(manifest)) continue
      const {
        name,
        version,
        private: isPrivate,
      } = JSON.parse(readFileSync(manifest, 'utf8')) as {
        name: string
        version: string
        private?: boolean
      }
      if (isPrivate) continue
      const changelog = join(folderOfPackage, 'CHANGELOG.md')
      expect(existsSync(changelog), `${name} has no CHANGELOG.md (run changeset version)`).toBe(true)
      const text = readFileSync(changelog, 'utf8')
      expect(text.startsWith(`# ${name}\n`), `${changelog} starts with its package name`).toBe(true)
      expect(text, `${changelog} has an entry for ${version}`).toContain(`\n## ${version}\n`)
      for (const entry of changelogEntries(text)) expect(problemsOf(entry), `${changelog}: ${entry}`).toEqual([])
    }
  })

  // After `changeset version` nothing is pending; each changeset written after it is checked here.
  if (changesets.length)
    it.each(changesets)('%s', (file) => {
      const text = readFileSync(join(folder, file), 'utf8')
      const match = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text)
      expect(match, `${file}: front matter between --- lines, then the entry`).not.toBeNull()
      const [, header = '', body = ''] = match!
      const bumps = header.split('\n').filter((line) => line.trim() !== '')
      expect(bumps.length, `${file}: names at least one package`).toBeGreaterThan(0)
      for (const line of bumps) {
        const bump = /^['"](@warmfold\/[\w-]+)['"]: (patch|minor|major)$/.exec(line.trim())
        expect(bump, `${file}: "${line}" must be '<package>': patch | minor | major`).not.toBeNull()
        expect(packages.has(bump![1]!), `${file}: ${bump![1]} is not a published workspace package`).toBe(true)
      }
      expect(body.trim().length, `${file}: the entry is empty`).toBeGreaterThan(0)
      expect(problemsOf(body), file).toEqual([])
    })
})
