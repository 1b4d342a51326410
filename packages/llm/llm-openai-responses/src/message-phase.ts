import { signatureFields } from './reasoning-signature.ts'

/** The `format` tag of a text block signature written by this adapter. */
export const MESSAGE_SIGNATURE_FORMAT = 'openai-responses/message@1'

/** An assistant message's `phase`, which OpenAI asks to resend on every assistant message that had one. */
export type MessagePhase = 'commentary' | 'final_answer'

/** The text block signature carrying `phase`: the JSON text of `{ format, phase }`. */
export function encodeMessagePhase(phase: MessagePhase): string {
  return JSON.stringify({ format: MESSAGE_SIGNATURE_FORMAT, phase })
}

/** The phase a signature from {@link encodeMessagePhase} carries; `undefined` for any other value. */
export function decodeMessagePhase(signature: string | undefined): MessagePhase | undefined {
  const phase = signatureFields(signature, MESSAGE_SIGNATURE_FORMAT)?.phase
  return phase === 'commentary' || phase === 'final_answer' ? phase : undefined
}
