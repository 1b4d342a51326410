import { describe, expect, it } from 'vitest'
import { callAborted, streamIncomplete } from '../src/adapter/index.ts'

describe('callAborted / streamIncomplete', () => {
  it('word the two ends of a call every adapter shares', () => {
    const reason = new Error('stop')
    const aborted = callAborted({ provider: 'p', model: 'm' }, reason)
    expect(aborted).toMatchObject({ code: 'ABORTED', provider: 'p', retryable: false, cause: reason })
    expect(aborted.message).toContain('the call to p/m was aborted')
    const cut = streamIncomplete({ provider: 'p', model: 'm' }, '3 events without message_stop')
    expect(cut).toMatchObject({ code: 'STREAM_INCOMPLETE', provider: 'p', retryable: true })
    expect(cut.message).toContain(
      'the stream from p/m ended after 3 events without message_stop; the reply is incomplete',
    )
  })
})
