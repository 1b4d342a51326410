export * from './scripted-adapter.ts'
