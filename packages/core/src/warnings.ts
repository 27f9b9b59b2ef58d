/**
 * Tritium's process warnings: each has a code of its own, so a user can filter it
 * (`node --disable-warning=TRITIUM_W005`, or a `process.on('warning')` listener reading
 * `warning.code`) and docs/warnings.md can list it. A code keeps its meaning once
 * published; a new warning takes the next number.
 */
export const TRITIUM_WARNINGS = Object.freeze({
  TRITIUM_W001: 'a listener of a server event (modelStateChanged, repositoryError) threw',
  TRITIUM_W002: 'poll mode: a poll could not read the model repository (once until a poll reads it again)',
  TRITIUM_W003: 'a model enables response_cache on a server that has no response cache',
  TRITIUM_W004: 'a model directory written for a load with files could not be removed',
  TRITIUM_W005: 'an execution was still running when the exit timeout (exitTimeoutMs) ran out; its instances are finalized anyway',
  TRITIUM_W006: "a model's or an instance's finalize failed",
  TRITIUM_W007: "a backend's finalize failed",
  TRITIUM_W008: "a request's cancellation listener (request.onCancel) threw",
  TRITIUM_W009: 'a sequence started again (START) before it ended',
  TRITIUM_W010: "an output's datatype or shape differs from the config (once per loaded model and output)",
  TRITIUM_W011: 'the Redis response cache failed (once per outage)',
  TRITIUM_W012: 'onnxruntime: a session could not be reopened with another intra-op thread count',
  TRITIUM_W013: 'fil: a model gives the deprecated parameter output_class',
  TRITIUM_W014: 'fil: a model gives a GPU or layout tuning parameter, which has no effect here',
  TRITIUM_W015: 'pytorch: a model gives a thread count other than the one libtorch already has (set once per process)',
  TRITIUM_W016: 'pytorch: libtorch refused the thread counts',
});

export type TritiumWarningCode = keyof typeof TRITIUM_WARNINGS;

/** Emits a process warning named TritiumWarning with its code. */
export function emitTritiumWarning(code: TritiumWarningCode, message: string): void {
  process.emitWarning(message, { type: 'TritiumWarning', code });
}
