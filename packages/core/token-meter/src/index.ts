export * from './estimate.ts'
export * from './token-measurement.ts'
export * from './token-meter.ts'
export { TokenMeter as default } from './token-meter.ts'
