export { cliVersion } from './cli-version.ts'
export { runCli, USAGE } from './run-cli.ts'
export type { CommandIo } from './shared/command-io.ts'
export { RunError } from './shared/run-error.ts'
export { UsageError } from './shared/usage-error.ts'
export type { StoreSpec } from './shared/session-store-spec.ts'
export { backendFactory, describeStore, parseStoreSpec, refuseHeldIds } from './shared/session-store-spec.ts'

export { runBench } from './bench/bench-command.ts'
export { MAX_STEPS, MAX_WINDOW } from './bench/bench-flag-values.ts'
export type {
  BenchReport,
  CostReport,
  RequestReport,
  RunReport,
  StallReport,
  SummaryCallReport,
} from './bench/bench-report.ts'
export type { ClassSurvival, FoldAuditReport, SummaryCallAudit } from './bench/fold-audit-report.ts'
export type { BenchArgs, CacheSource } from './bench/parse-bench-args.ts'
export { BENCH_USAGE, parseBenchArgs } from './bench/parse-bench-args.ts'

export { runDoctor } from './doctor/doctor-command.ts'
export type {
  DoctorBreak,
  DoctorChange,
  DoctorDivergence,
  DoctorReport,
  DoctorRequest,
  DoctorTotals,
  RequestApi,
  UnreadableLine,
} from './doctor/doctor-report.ts'
export { REQUEST_APIS } from './doctor/doctor-report.ts'
export type { DoctorArgs } from './doctor/parse-doctor-args.ts'
export { DOCTOR_USAGE, parseDoctorArgs } from './doctor/parse-doctor-args.ts'
export type { LoggedRequest, LogLine } from './doctor/read-request-log.ts'
export { MAX_JSON_DEPTH, parseLogLine } from './doctor/read-request-log.ts'
export { RequestDoctor } from './doctor/request-doctor.ts'

export type { ReportArgs } from './report/parse-report-args.ts'
export { parseReportArgs, REPORT_USAGE } from './report/parse-report-args.ts'
export { runReport } from './report/report-command.ts'
export type {
  BilledRequest,
  ReportFold,
  ReportFoldAttempt,
  ReportFoldAudit,
  ReportFoldTiming,
  ReportFoldTotals,
  ReportFork,
  ReportGuard,
  ReportLineage,
  ReportMarker,
  ReportPruneDecision,
  ReportRequest,
  ReportTotals,
  RequestBreak,
  RequestTokens,
  SessionReport,
} from './report/report-model.ts'
