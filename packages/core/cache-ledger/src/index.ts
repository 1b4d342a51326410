export * from './cache-events.ts'
