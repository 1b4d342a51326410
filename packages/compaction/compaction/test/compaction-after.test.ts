import { createMessage, createUserMessage } from '@warmfold/llm'
import { describe, expect, it } from 'vitest'
import {
  checkpointSource,
  COMPACTION_AFTER_PLUGIN,
  compactionAfterId,
  compactionAfterSource,
  isCheckpointMessage,
} from '../src/index.ts'
import { isCompactionAfterMessage } from '../src/compaction-after.ts'

describe('compaction/after message markers', () => {
  it('marks a message as appended by a compaction/after listener of one compaction', () => {
    const source = compactionAfterSource('c7')
    expect(source).toEqual({ kind: 'plugin', plugin: COMPACTION_AFTER_PLUGIN, details: { compactionId: 'c7' } })
    expect(Object.isFrozen(source)).toBe(true)
    const message = createMessage({ role: 'user', content: 'Rules, re-read.', source })
    expect(isCompactionAfterMessage(message)).toBe(true)
    expect(compactionAfterId(message)).toBe('c7')
    expect(isCheckpointMessage(message)).toBe(false)
  })

  it('recognises no other message', () => {
    const checkpoint = createMessage({ role: 'user', content: 'summary', source: checkpointSource('c7') })
    for (const message of [createUserMessage('hi'), checkpoint]) {
      expect(isCompactionAfterMessage(message)).toBe(false)
      expect(compactionAfterId(message)).toBeUndefined()
    }
  })
})
