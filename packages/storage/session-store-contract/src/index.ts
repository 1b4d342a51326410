export type { BackendHarness, ChildBackendSpec, StoreUnderTest } from './backend-harness.ts'
export { describeBackendContract } from './describe-backend-contract.ts'
