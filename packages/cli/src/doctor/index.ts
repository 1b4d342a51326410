export { runDoctor } from './doctor-command.ts'
export type {
  DoctorBreak,
  DoctorChange,
  DoctorDivergence,
  DoctorReport,
  DoctorRequest,
  DoctorTotals,
  RequestApi,
  UnreadableLine,
} from './doctor-report.ts'
export { REQUEST_APIS } from './doctor-report.ts'
export type { DoctorArgs } from './parse-doctor-args.ts'
export { DOCTOR_USAGE, parseDoctorArgs } from './parse-doctor-args.ts'
export type { LoggedRequest, LogLine } from './read-request-log.ts'
export { MAX_JSON_DEPTH, parseLogLine } from './read-request-log.ts'
export { RequestDoctor } from './request-doctor.ts'
