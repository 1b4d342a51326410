import { describe, expect, it } from 'vitest'
import { parseToolArguments } from '../src/adapter/index.ts'

describe('parseToolArguments', () => {
  it('parses tool arguments with documented fallbacks', () => {
    expect(JSON.stringify(parseToolArguments('{"b": 1, "a": [2]}'))).toBe('{"b":1,"a":[2]}')
    expect(parseToolArguments('')).toEqual({})
    expect(parseToolArguments('  \n')).toEqual({})
    expect(parseToolArguments('{"path": "a.ts"')).toEqual({ _raw: '{"path": "a.ts"' })
    expect(parseToolArguments('[1, 2]')).toEqual({ _raw: '[1, 2]' })
    expect(parseToolArguments('null')).toEqual({ _raw: 'null' })
  })
})
