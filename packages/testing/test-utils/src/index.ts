export * from './cordis-prints.ts'
export * from './readme-examples.ts'
export * from './recording-server.ts'
export * from './test-context.ts'
