export * from './backend-harness.ts'
export * from './contract-events.ts'
export * from './contract-process.ts'
export * from './describe-backend-contract.ts'
