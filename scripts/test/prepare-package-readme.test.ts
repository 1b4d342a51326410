import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import {
  postpack,
  prepack,
  prepareReadme,
  publishedReadmeProblems,
  repositoryRootOf,
  SOURCE_BACKUP,
} from '../prepare-package-readme.ts'
import { workspacePackages } from '../workspace-packages.ts'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '../..')
const blob = 'https://github.com/warmfold/warmfold/blob/main'

const SOURCE = `# @warmfold/example

Built on [\`@warmfold/llm\`](../../llm/llm/README.md), see [Config](#config) and
[the docs](https://example.com/docs). Code: \`[not](./a-link)\`.

![diagram](./docs/diagram.png)

## Config

Read [the test](./test/config.test.ts#L10) and [the folder](./src/).

\`\`\`sh
# not a heading
cat [x](./inside-a-fence)
\`\`\`

[ref]: ./CHANGELOG.md

## Testing

Run \`pnpm vitest run\` from the root; see [the fixture](./test/fixture.ts).

\`\`\`sh
## not a heading either, so the section goes on
npx vitest run packages/group/example
\`\`\`

### Property tests

More repository detail.

## Testing subpath: \`@warmfold/example/testing\`

Kept: it documents an export.
`

describe('prepareReadme', () => {
  const published = prepareReadme(SOURCE, 'packages/group/example')

  it('drops the whole `## Testing` section, fences and subsections included, and keeps the rest', () => {
    expect(published).not.toMatch(/^## Testing$/m)
    expect(published).not.toContain('fixture.ts')
    expect(published).not.toContain('Property tests')
    expect(published).not.toContain('npx vitest run packages/group/example')
    expect(published).toContain('## Testing subpath: `@warmfold/example/testing`\n\nKept: it documents an export.\n')
    expect(published).toContain('## Config')
  })

  it('makes relative links and images absolute, with their anchors, and leaves URLs, anchors and code alone', () => {
    expect(published).toContain(`[\`@warmfold/llm\`](${blob}/packages/llm/llm/README.md)`)
    expect(published).toContain('[Config](#config)')
    expect(published).toContain('[the docs](https://example.com/docs)')
    expect(published).toContain('`[not](./a-link)`')
    expect(published).toContain(
      '![diagram](https://raw.githubusercontent.com/warmfold/warmfold/main/packages/group/example/docs/diagram.png)',
    )
    expect(published).toContain(`[the test](${blob}/packages/group/example/test/config.test.ts#L10)`)
    expect(published).toContain(
      '[the folder](https://github.com/warmfold/warmfold/tree/main/packages/group/example/src/)',
    )
    expect(published).toContain('# not a heading\ncat [x](./inside-a-fence)\n')
    expect(published).toContain(`[ref]: ${blob}/packages/group/example/CHANGELOG.md`)
    expect(publishedReadmeProblems(published)).toEqual([])
  })

  it('is idempotent', () => {
    expect(prepareReadme(published, 'packages/group/example')).toBe(published)
  })

  it('refuses a link that leaves the repository, naming it', () => {
    expect(() => prepareReadme('[up](../../../../outside.md)\n', 'packages/group/example')).toThrow(
      'README of packages/group/example: the link "../../../../outside.md" points outside the repository',
    )
  })
})

describe('publishedReadmeProblems', () => {
  it('names the Testing section and every relative link of a source README, by line', () => {
    expect(publishedReadmeProblems(SOURCE)).toEqual([
      'line 3: the relative link "../../llm/llm/README.md"',
      'line 6: the relative link "./docs/diagram.png"',
      'line 10: the relative link "./test/config.test.ts#L10"',
      'line 10: the relative link "./src/"',
      'line 17: the relative link "./CHANGELOG.md"',
      'line 19: a "## Testing" section',
      'line 21: the relative link "./test/fixture.ts"',
    ])
  })

  it('finds nothing in the published README of any package that is packed', async () => {
    const published = (await workspacePackages(root)).filter((entry) => !entry.private)
    expect(published.map((entry) => entry.name)).toContain('@warmfold/cli')
    for (const { folder } of published) {
      const source = await readFile(join(root, folder, 'README.md'), 'utf8')
      expect(publishedReadmeProblems(prepareReadme(source, folder)), folder).toEqual([])
    }
  })
})

describe('prepack and postpack', () => {
  const folders: string[] = []
  afterEach(async () => {
    for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
  })

  async function packageFolder(): Promise<{ repository: string; folder: string }> {
    const repository = await mkdtemp(join(tmpdir(), 'warmfold-readme-'))
    folders.push(repository)
    const folder = join(repository, 'packages', 'group', 'example')
    await mkdir(folder, { recursive: true })
    await writeFile(join(folder, 'README.md'), SOURCE)
    await writeFile(join(repository, 'pnpm-workspace.yaml'), 'packages:\n  - packages/*/*\n')
    return { repository, folder }
  }

  it('swaps the published README in and puts the source back byte for byte', async () => {
    const { repository, folder } = await packageFolder()
    await prepack(folder, repository)
    expect(await readFile(join(folder, 'README.md'), 'utf8')).toBe(prepareReadme(SOURCE, 'packages/group/example'))
    expect(await readFile(join(folder, SOURCE_BACKUP), 'utf8')).toBe(SOURCE)
    await postpack(folder)
    expect(await readFile(join(folder, 'README.md'), 'utf8')).toBe(SOURCE)
    expect(existsSync(join(folder, SOURCE_BACKUP))).toBe(false)
  })

  it('after a pack that died before postpack, keeps the source as the backup, never the published copy', async () => {
    const { repository, folder } = await packageFolder()
    await prepack(folder, repository)
    await prepack(folder, repository)
    expect(await readFile(join(folder, SOURCE_BACKUP), 'utf8')).toBe(SOURCE)
    await postpack(folder)
    expect(await readFile(join(folder, 'README.md'), 'utf8')).toBe(SOURCE)
  })

  it('postpack without a prepack fails, naming the missing backup, and leaves README.md alone', async () => {
    const { folder } = await packageFolder()
    await expect(postpack(folder)).rejects.toThrow(`${join(folder, SOURCE_BACKUP)} is missing: prepack did not run`)
    expect(await readFile(join(folder, 'README.md'), 'utf8')).toBe(SOURCE)
  })

  it('runs as the lifecycle command the manifests name, in the package folder', async () => {
    const { repository, folder } = await packageFolder()
    const script = join(root, 'scripts', 'prepare-package-readme.ts')
    const tsx = join(root, 'node_modules', '.bin', 'tsx')
    await run(tsx, [script, 'prepack'], { cwd: folder })
    // Links resolve against the workspace holding the package folder.
    expect(repositoryRootOf(folder)).toBe(repository)
    expect(await readFile(join(folder, 'README.md'), 'utf8')).toBe(prepareReadme(SOURCE, 'packages/group/example'))
    expect(await readFile(join(folder, SOURCE_BACKUP), 'utf8')).toBe(SOURCE)
    await run(tsx, [script, 'postpack'], { cwd: folder })
    expect(await readFile(join(folder, 'README.md'), 'utf8')).toBe(SOURCE)
    await expect(run(tsx, [script, 'bogus'], { cwd: folder })).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('usage: tsx scripts/prepare-package-readme.ts prepack|postpack (got "bogus")'),
    })
    // Three tsx processes: about 1.5 s each on a busy 2-core machine, past vitest's default 5 s.
  }, 30_000)
})
