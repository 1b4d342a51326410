export * from './artifact.ts'
export * from './extract-artifacts.ts'
export * from './logged-message.ts'
export * from './tool-kind.ts'
