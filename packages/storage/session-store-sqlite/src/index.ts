export * from './sqlite-schema.ts'
export * from './sqlite-session-backend.ts'
