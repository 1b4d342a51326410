import { describe, expect, it } from 'vitest'
import type { Artifact, ArtifactClass } from '../src/index.ts'
import { auditFold, extractArtifacts } from '../src/index.ts'
import { assistant, call, logOf, plugin, reasoning, result, user } from './log-fixture.ts'

const texts = (artifacts: readonly Artifact[], artifactClass: ArtifactClass): string[] =>
  artifacts.filter((artifact) => artifact.class === artifactClass).map((artifact) => artifact.text)

/** Arguments whose `content` nests 40,000 levels (an array in an object, 20,000 times). */
const nested = (path: string) =>
  `{"path":"${path}","content":${'[{"a":'.repeat(20_000)}1${'}]'.repeat(20_000)},"url":"https://example.com/x"}`

describe('extractArtifacts: tool-call arguments', () => {
  it('takes paths from path-like keys and commands from command keys, argument vectors and shell tools', () => {
    const { artifacts, toolCalls } = extractArtifacts(
      logOf([
        call('a', 'read_file', { file_path: './src/app.ts' }),
        call('b', 'glob_files', { paths: ['docs/', 'README.md'], cwd: '/home/dev/app' }),
        call('c', 'shell', { command: ['bash', '-lc', 'go test ./...'] }),
        call('d', 'bash', 'ls -la dist'),
        call('e', 'run_command', { cmd: 'PORT=3000 node server.js\necho done' }),
      ]),
    )
    expect(texts(artifacts, 'path')).toEqual(['src/app.ts', 'docs', 'README.md', '/home/dev/app', 'server.js'])
    expect(texts(artifacts, 'command')).toEqual(['go test ./...', 'ls -la dist', 'PORT=3000 node server.js'])
    expect(texts(artifacts, 'identifier')).toEqual(['PORT=3000'])
    expect(toolCalls.map((record) => [record.name, record.command, record.paths])).toEqual([
      ['read_file', undefined, ['src/app.ts']],
      ['glob_files', undefined, ['docs', 'README.md', '/home/dev/app']],
      ['shell', 'go test ./...', []],
      ['bash', 'ls -la dist', []],
      ['run_command', 'PORT=3000 node server.js', []],
    ])
  })

  it('reads the files of a patch and URLs, never file contents, edit strings or search patterns', () => {
    const { artifacts } = extractArtifacts(
      logOf([
        call('a', 'apply_patch', {
          input:
            '*** Begin Patch\n*** Update File: src/a.ts\n-old\n+new src/never.ts\n*** Add File: src/b.ts\n*** End Patch',
        }),
        call('b', 'write_file', { path: 'notes.md', content: 'see src/never.ts and https://never.example/x, 5ms' }),
        call('c', 'edit_file', { path: 'src/c.ts', old_string: 'timeout=10', new_string: 'timeout=20' }),
        call('d', 'grep', { pattern: 'TODO src/never.ts', path: 'src/**/*.ts' }),
        call('e', 'web_fetch', { url: 'https://example.com/docs/' }),
      ]),
    )
    expect(texts(artifacts, 'path')).toEqual(['src/a.ts', 'src/b.ts', 'notes.md', 'src/c.ts'])
    expect(texts(artifacts, 'url')).toEqual(['https://example.com/docs'])
    expect(texts(artifacts, 'identifier')).toEqual([])
    expect(texts(artifacts, 'number')).toEqual([])
  })

  it('reads arguments nested 20,000 levels deep, and finds what a later call holds in them, without a recursion', () => {
    const { artifacts } = extractArtifacts(logOf([call('a', 'write_file', nested('src/deep.ts'))]))
    expect(texts(artifacts, 'path')).toEqual(['src/deep.ts'])
    expect(texts(artifacts, 'url')).toEqual(['https://example.com/x'])
    const audit = auditFold({
      folded: artifacts,
      checkpointText: '',
      visibleAfter: [call('b', 'write_file', nested('src/deep.ts'))],
    })
    expect(audit.classes.path).toEqual({ seen: 1, kept: 1, keptInCheckpoint: 0 })
    expect(audit.classes.url).toEqual({ seen: 1, kept: 1, keptInCheckpoint: 0 })
  })

  it('says which calls change the files they name: edits and writes do, reads and runners do not', () => {
    const { toolCalls } = extractArtifacts(
      logOf([
        call('a', 'edit_file', { path: 'a.ts' }),
        call('b', 'read_file', { path: 'a.ts' }),
        call('c', 'run_tests', { path: 'a.test.ts' }),
        call('d', 'bash', { command: 'rm a.ts' }),
        call('e', 'custom', { path: 'b.ts' }),
      ]),
      { toolKinds: { custom: 'write' } },
    )
    expect(toolCalls.map((record) => [record.name, record.kind, record.fileAction])).toEqual([
      ['edit_file', 'write', 'changed'],
      ['read_file', 'read', 'read'],
      ['run_tests', 'write', 'read'],
      ['bash', 'write', 'read'],
      ['custom', 'write', 'changed'],
    ])
  })

  it('reads arguments that are not JSON as a command for a shell tool and as text otherwise', () => {
    const { artifacts } = extractArtifacts(
      logOf([call('a', 'bash', 'cat src/a.ts | head'), call('b', 'lookup', 'see src/b.ts {')]),
    )
    expect(texts(artifacts, 'command')).toEqual(['cat src/a.ts | head'])
    expect(texts(artifacts, 'path')).toEqual(['src/a.ts', 'src/b.ts'])
  })
})

describe('extractArtifacts: results and text', () => {
  it('pairs results with their calls: exit code, error flag, error headlines', () => {
    const { toolCalls, artifacts } = extractArtifacts(
      logOf([
        call('a', 'bash', { command: 'npx tsc' }),
        result(
          'a',
          "src/a.ts(1,7): error TS2322: Type 'string' is not assignable to type 'number'.\nExit code: 2",
          true,
        ),
        call('b', 'bash', { command: 'npm test' }),
        result('b', 'all good\nexit code 0'),
        call('c', 'write_file', { path: '/etc/hosts' }),
        result('c', '\n  Permission denied: outside the workspace.\nmore', true),
        call('d', 'bash', { command: 'sleep 1' }),
      ]),
    )
    expect(toolCalls.map((record) => record.result)).toEqual([
      { seq: 1, isError: true, exitCode: 2, errors: ["TS2322: Type 'string' is not assignable to type 'number'"] },
      { seq: 3, isError: false, exitCode: 0, errors: [] },
      { seq: 5, isError: true, errors: ['Permission denied: outside the workspace'] },
      undefined,
    ])
    expect(texts(artifacts, 'error')).toEqual([
      "TS2322: Type 'string' is not assignable to type 'number'",
      'Permission denied: outside the workspace',
    ])
  })

  it('folds every mention of an artifact together: mentions, first and newest seq, and the user as origin once they typed it', () => {
    const { artifacts } = extractArtifacts(
      logOf(
        [
          call('a', 'read_file', { path: 'src/a.ts' }),
          result('a', 'src/a.ts is empty; src/a.ts again'),
          assistant('I read `src/a.ts`.'),
          user('Now fix src/a.ts please.'),
        ],
        10,
      ),
    )
    expect(artifacts.find((artifact) => artifact.text === 'src/a.ts')).toEqual({
      class: 'path',
      text: 'src/a.ts',
      seq: 13,
      firstSeq: 10,
      origin: 'user',
      mentions: 5,
    })
    expect(artifacts.filter((artifact) => artifact.class === 'user-message')).toEqual([
      { class: 'user-message', text: 'Now fix src/a.ts please', seq: 13, firstSeq: 13, origin: 'user', mentions: 1 },
    ])
  })

  it('reads errors in the assistant text only inside code, and every line of what the user pastes', () => {
    const { artifacts } = extractArtifacts(
      logOf([
        assistant('TypeError: this prose line is not a headline.\nThe log says `Error: boom` and the fix is `npm ci`.'),
        user('It crashes:\nValueError: bad input\n```\nKeyError: id\n```'),
      ]),
    )
    expect(texts(artifacts, 'error')).toEqual(['Error: boom', 'ValueError: bad input', 'KeyError: id'])
    expect(texts(artifacts, 'command')).toEqual(['npm ci'])
    expect(texts(artifacts, 'user-message')).toEqual(['It crashes', 'ValueError: bad input'])
  })

  it('skips plugin and system messages, and reasoning unless asked', () => {
    const messages = logOf([
      plugin('checkpoint about src/old.ts'),
      reasoning('maybe src/think.ts'),
      user('look at src/real.ts'),
    ])
    expect(texts(extractArtifacts(messages).artifacts, 'path')).toEqual(['src/real.ts'])
    expect(texts(extractArtifacts(messages, { includeReasoning: true }).artifacts, 'path')).toEqual([
      'src/think.ts',
      'src/real.ts',
    ])
  })

  it('reads a path whose position is followed by text without a space (grep -n, Ruby frames)', () => {
    const { artifacts } = extractArtifacts(
      logOf([
        call('a', 'bash', { command: 'rg -n total src' }),
        result(
          'a',
          "src/cart.ts:42:export function total(cart: Cart): number {\n/app/jobs/backfill.rb:12:in `block in <main>': undefined method",
        ),
      ]),
    )
    expect(texts(artifacts, 'path')).toEqual(['src', 'src/cart.ts', '/app/jobs/backfill.rb'])
  })

  it('removes ANSI colours and writes paths inside the workspace root relative to it', () => {
    const { artifacts } = extractArtifacts(
      logOf([
        call('a', 'bash', { command: 'vitest' }),
        result(
          'a',
          '\u001b[31m FAIL \u001b[39m /home/dev/app/src/a.test.ts > adds\n/home/dev/app\n/home/dev/other/x.ts',
        ),
      ]),
      { workspaceRoot: '/home/dev/app/' },
    )
    expect(texts(artifacts, 'error')).toEqual(['FAIL /home/dev/app/src/a.test.ts > adds'])
    expect(texts(artifacts, 'path')).toEqual(['src/a.test.ts', '/home/dev/app', '/home/dev/other/x.ts'])
  })

  it('is deterministic and returns plain JSON', () => {
    const messages = logOf([
      call('a', 'bash', { command: 'git log -1' }),
      result('a', 'commit 9fceb02d0ae5 (#12) took 3.2s, see https://x.dev/a'),
    ])
    const first = extractArtifacts(messages)
    expect(extractArtifacts(messages)).toEqual(first)
    expect(JSON.parse(JSON.stringify(first))).toEqual(first)
  })
})

describe('extractArtifacts: bad input', () => {
  it('names the entry and the rule it breaks', () => {
    expect(() => extractArtifacts('x' as never)).toThrow(
      'extractArtifacts(messages) must be an array of { seq, message }, got string',
    )
    expect(() => extractArtifacts([{ seq: -1, message: user('a') }])).toThrow(
      'extractArtifacts(messages)[0].seq must be a non-negative integer, got -1',
    )
    expect(() =>
      extractArtifacts([
        { seq: 2, message: user('a') },
        { seq: 2, message: user('b') },
      ]),
    ).toThrow(
      'extractArtifacts(messages)[1].seq 2 must be greater than the seq before it (2): pass messages in log order',
    )
    expect(() => extractArtifacts([{ seq: 0, message: { role: 'user' } as never }])).toThrow(
      'extractArtifacts(messages)[0].message (seq 0) must be a Message with a role and content blocks',
    )
    expect(() => extractArtifacts(logOf([call('a', 'read', {})]), { toolKinds: { read: 'reader' as never } })).toThrow(
      `toolKinds: the kind of tool "read" must be 'read', 'write' or 'other', got "reader"`,
    )
  })
})
