import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { checkReadme, findReadmes, renderExampleBlock } from '../src/readme-examples.ts'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..')
const run = promisify(execFile)

describe('every README shows its example files verbatim, and has no unchecked TypeScript block', () => {
  const readmes = findReadmes(root)

  it('finds the root README and every package README', () => {
    const names = readmes.map((readme) => relative(root, readme))
    expect(names).toContain('README.md')
    expect(names).toContain('packages/cli/README.md')
    expect(names).toContain('packages/llm/llm/README.md')
    expect(names).toContain('packages/compaction/compaction-basic/README.md')
  })

  it.each(readmes.map((readme) => [relative(root, readme), readme]))('%s', (_name, readme) => {
    expect(checkReadme(readme, root).problems.map((problem) => problem.message)).toEqual([])
  })
})

describe('checkReadme', () => {
  const folders: string[] = []
  afterEach(async () => {
    for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
  })

  async function packageWith(readme: string, files: Record<string, string>): Promise<string> {
    const folder = await mkdtemp(join(tmpdir(), 'warmfold-readme-'))
    folders.push(folder)
    await mkdir(join(folder, 'examples'))
    await writeFile(join(folder, 'README.md'), readme)
    for (const [name, text] of Object.entries(files)) await writeFile(join(folder, name), text)
    return join(folder, 'README.md')
  }

  const code = "import { x } from 'y'\n\nexport const z = x\n"

  it('accepts a block that is the file, also indented inside a list item', async () => {
    const block = renderExampleBlock('examples/a.ts', code)
    const indented = renderExampleBlock('examples/b.ts', code, '  ')
    expect(indented).toContain("\n  import { x } from 'y'\n\n  export const z = x\n  ```\n")
    const readme = await packageWith(`# p\n\n${block}\n\n- item\n\n${indented}\n`, {
      'examples/a.ts': code,
      'examples/b.ts': code,
    })
    expect(checkReadme(readme).problems).toEqual([])
  })

  it('reports a block that differs from its file, and renders the file in its place', async () => {
    const stale = renderExampleBlock('examples/a.ts', "import { x } from 'y'\n")
    const readme = await packageWith(`# p\n\n${stale}\n`, { 'examples/a.ts': code })
    const { problems, text } = checkReadme(readme)
    expect(problems).toEqual([
      {
        kind: 'differs',
        message: `${readme}:3: the block of examples/a.ts differs from the file; run \`pnpm docs:examples\` to copy it`,
      },
    ])
    expect(text).toBe(`# p\n\n${renderExampleBlock('examples/a.ts', code)}\n`)
  })

  it('reports a TypeScript block outside the markers, a missing file, an unclosed marker and an example never shown', async () => {
    const readme = await packageWith(
      [
        '# p',
        '',
        '```ts',
        'const a = 1',
        '```',
        '',
        '```sh',
        'pnpm test',
        '```',
        '',
        '<!-- example: examples/gone.ts -->',
        '<!-- /example -->',
        '',
        '<!-- example: examples/a.ts -->',
        '',
      ].join('\n'),
      { 'examples/a.ts': code, 'examples/extra.ts': code },
    )
    const problems = checkReadme(readme).problems
    expect(problems.map((problem) => problem.kind)).toEqual(['unmarked', 'missing', 'unclosed', 'unshown'])
    expect(problems[0]!.message).toContain(':3: a TypeScript block outside')
    expect(problems[1]!.message).toContain(':11: example file examples/gone.ts does not exist')
    expect(problems[2]!.message).toContain(':14: "<!-- example: examples/a.ts -->" has no "<!-- /example -->" after it')
    expect(problems[3]!.message).toContain('examples/extra.ts is never shown')
  })

  it('reads a marker quoted inside another fenced block as text', async () => {
    const readme = await packageWith(
      ['# p', '', '````md', '<!-- example: examples/quoted.ts -->', '```ts', '```', '````', ''].join('\n'),
      {},
    )
    expect(checkReadme(readme).problems).toEqual([])
  })
})

describe('scripts/sync-readme-examples.ts', () => {
  it('--check changes nothing and passes on the repository', async () => {
    const before = await readFile(join(root, 'packages/llm/llm/README.md'), 'utf8')
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', 'scripts/sync-readme-examples.ts', '--check'],
      { cwd: root },
    )
    expect(stderr).toBe('')
    expect(stdout).toBe('')
    expect(await readFile(join(root, 'packages/llm/llm/README.md'), 'utf8')).toBe(before)
  })

  it('refuses an unknown flag, naming it', async () => {
    await expect(
      run(process.execPath, ['--import', 'tsx', 'scripts/sync-readme-examples.ts', '--fix'], { cwd: root }),
    ).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('unknown argument --fix'),
    })
  })
})
