export type {
  ScriptedAdapterOptions,
  ScriptedModelConfig,
  ScriptedReply,
  ScriptedResponses,
} from './scripted-adapter.ts'
export { ScriptedAdapter } from './scripted-adapter.ts'
