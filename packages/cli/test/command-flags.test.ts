import { describe, expect, it } from 'vitest'
import {
  BENCH_USAGE,
  DOCTOR_USAGE,
  parseBenchArgs,
  parseDoctorArgs,
  parseReportArgs,
  REPORT_USAGE,
} from '../src/index.ts'
import { BENCH_FLAGS } from '../src/bench/bench-flags.ts'
import type { CommandFlags } from '../src/shared/command-flags.ts'
import { formatUsage, parseFlags } from '../src/shared/command-flags.ts'

const TOY: CommandFlags<{ level: number; tags: string[]; quiet: boolean; help: boolean }> = {
  command: 'toy',
  synopsis: 'Usage: warmfold toy [options]',
  footer: 'Exit codes: 0 ok.',
  column: 12,
  positionals: true,
  flags: {
    level: { value: 'N', default: 1, parse: (text) => Number(text), help: ['how loud', '(default 1)'] },
    tags: { name: 'tag', value: 'T', default: [], parse: (text, values) => [...values.tags, text], help: ['a tag'] },
    quiet: { short: 'q', default: false, help: ['say nothing at all, not even the warnings'] },
    help: { short: 'h', default: false, help: ['show this help'] },
  },
}

describe('command flags (one table parses and prints --help)', () => {
  it('parses values, repeats, short switches and positionals in command-line order', () => {
    const parsed = parseFlags(TOY, ['a', '--level', '3', '--tag=x', '-q', '--tag', '-y', 'b'])
    expect(parsed.values).toEqual({ level: 3, tags: ['x', '-y'], quiet: true, help: false })
    expect([...parsed.given]).toEqual(['level', 'tags', 'quiet'])
    expect(parsed.positionals).toEqual(['a', 'b'])
  })

  it.each([
    [['--loud'], 'unknown flag "--loud"; run warmfold toy --help for the flags'],
    [['-x'], 'unknown flag "-x"; run warmfold toy --help for the flags'],
    [['--level'], '--level needs a value'],
    [['--quiet=yes'], '--quiet takes no value, got "--quiet=yes"'],
  ])('%j is refused naming the flag', (argv, message) => {
    expect(() => parseFlags(TOY, argv)).toThrow(message)
  })

  it('prints the usage from the table: a long flag has its help below it', () => {
    expect(formatUsage(TOY)).toBe(
      [
        'Usage: warmfold toy [options]',
        '',
        'Options:',
        '  --level N   how loud',
        '              (default 1)',
        '  --tag T     a tag',
        '  -q, --quiet',
        '              say nothing at all, not even the warnings',
        '  -h, --help  show this help',
        '',
        'Exit codes: 0 ok.',
      ].join('\n'),
    )
  })

  it("every flag of each command is in its --help, and a value may start with '-'", () => {
    for (const name of Object.keys(BENCH_FLAGS.flags)) {
      const flag = name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)
      if (name !== 'idleSeconds' && name !== 'probeUrl') expect(BENCH_USAGE).toContain(`--${flag}`)
    }
    expect(BENCH_USAGE).toMatch(/--idle S +virtual seconds/)
    expect(BENCH_USAGE).toMatch(/--cache-probe URL +measure/)
    expect(REPORT_USAGE).toMatch(/--store S +read SESSION_ID/)
    expect(DOCTOR_USAGE).toMatch(/--html FILE +also write/)
    expect(parseBenchArgs(['--stop', '-x', '--stop', '--']).stop).toEqual(['-x', '--'])
    expect(() => parseBenchArgs(['--json=1'])).toThrow('--json takes no value, got "--json=1"')
    expect(() => parseBenchArgs(['extra'])).toThrow('unknown flag "extra"; run warmfold bench --help for the flags')
    expect(parseReportArgs(['-']).session).toBe('-')
    expect(parseDoctorArgs(['--html', '-', 'log.jsonl'])).toMatchObject({ file: 'log.jsonl', html: '-' })
  })
})
