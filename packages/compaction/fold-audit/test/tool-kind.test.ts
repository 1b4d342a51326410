import { describe, expect, it } from 'vitest'
import { defaultToolKind, resolveToolKind, toolNameWords } from '../src/tool-kind.ts'

/** A host that calls `cat` through bash a read. */
const byCommand = (name: string, args: string) =>
  name === 'bash' && JSON.parse(args).command.startsWith('cat ') ? ('read' as const) : undefined

describe('tool kinds', () => {
  it('splits tool names into words whatever their case style', () => {
    expect(toolNameWords('readFile')).toEqual(['read', 'file'])
    expect(toolNameWords('fs.read-file_v2')).toEqual(['fs', 'read', 'file', 'v2'])
    expect(toolNameWords('HTTPGet')).toEqual(['httpget'])
  })

  it.each([
    ['read_file', 'read'],
    ['listDirectory', 'read'],
    ['grep', 'read'],
    ['web_fetch', 'read'],
    ['git_status', 'read'],
    ['edit_file', 'write'],
    ['apply_patch', 'write'],
    ['bash', 'write'],
    ['run_terminal_command', 'write'],
    ['run_tests', 'write'],
    ['read_and_update', 'write'],
    ['todo_write', 'write'],
    ['ask_user', 'other'],
    ['think', 'other'],
  ] as const)('%s is %s by default', (name, kind) => {
    expect(defaultToolKind(name)).toBe(kind)
  })

  it("prefers the host's declaration, by record or by function, and falls back to the default", () => {
    expect(resolveToolKind({ bash: 'read' }, 'bash', '{}')).toBe('read')
    expect(resolveToolKind({ bash: 'read' }, 'grep', '{}')).toBe('read')
    expect(resolveToolKind(byCommand, 'bash', '{"command":"cat a.ts"}')).toBe('read')
    expect(resolveToolKind(byCommand, 'bash', '{"command":"rm a.ts"}')).toBe('write')
  })
})
