import { describe, expect, it } from 'vitest'
import { migrate, postgresSessionStore, SCHEMA_VERSION } from '../src/index.ts'
import { freshDatabase, sessionError, sql } from './pg-fixtures.ts'

describe('schema migrations', () => {
  it('migrates an empty database, and a re-run changes nothing', async () => {
    const url = await freshDatabase()
    expect(await migrate(url)).toEqual({ from: 0, to: SCHEMA_VERSION })
    expect(await migrate(url)).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION })
    const tables = await sql<{ table_name: string }>(
      url,
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
    )
    expect(tables.map((row) => row.table_name)).toEqual([
      'warmfold_events',
      'warmfold_leases',
      'warmfold_schema',
      'warmfold_sessions',
    ])
  })

  it('two hosts migrating at once both succeed, one of them from an empty database', async () => {
    const url = await freshDatabase()
    const results = await Promise.all([migrate(url), migrate(url)])
    expect(results.map((result) => result.from).toSorted()).toEqual([0, SCHEMA_VERSION])
  })

  it('the store migrates on first use', async () => {
    const url = await freshDatabase()
    const store = postgresSessionStore({ url })
    try {
      expect(await store.list()).toEqual([])
      expect(await sql(url, 'SELECT version FROM warmfold_schema')).toEqual([{ version: SCHEMA_VERSION }])
    } finally {
      await store.close()
    }
  })

  it('refuses a schema newer than the code, naming both versions', async () => {
    const url = await freshDatabase()
    await migrate(url)
    await sql(url, 'UPDATE warmfold_schema SET version = $1', [SCHEMA_VERSION + 1])
    await expect(migrate(url)).rejects.toThrow(`version ${SCHEMA_VERSION + 1}, newer than version ${SCHEMA_VERSION}`)
    const store = postgresSessionStore({ url })
    try {
      const refused = await sessionError(store.create('s', {}))
      expect(refused.code).toBe('IO')
      expect(refused.message).toContain(`version ${SCHEMA_VERSION + 1}, newer than version ${SCHEMA_VERSION}`)
      const unread = await sessionError(store.read('s'))
      expect(unread.code).toBe('IO')
      expect(unread.message).toContain(`version ${SCHEMA_VERSION + 1}, newer than version ${SCHEMA_VERSION}`)
    } finally {
      await store.close()
    }
  })

  it('read migrates nothing: a database without the schema holds no sessions and stays empty', async () => {
    const url = await freshDatabase()
    const store = postgresSessionStore({ url })
    try {
      const missing = await sessionError(store.read('s'))
      expect(missing.code).toBe('NOT_FOUND')
      expect(missing.message).toBe(`session s does not exist in ${url}`)
      expect(await sql(url, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`)).toEqual(
        [],
      )
    } finally {
      await store.close()
    }
  })
})
