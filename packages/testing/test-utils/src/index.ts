export * from './test-context.ts'
