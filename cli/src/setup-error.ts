/**
 * An expected condition a person fixes by changing a setting or an argument (a port in use, a
 * service that does not answer, a missing file): main prints its message as one line, with no
 * stack trace, stops what the command started and exits with exitCode.
 */
export class SetupError extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = 'SetupError';
    this.exitCode = exitCode;
  }
}

/** A command used wrongly: the message carries the usage; exit code 2, as for an unknown command. */
export function usageError(message: string, usage: string): SetupError {
  return new SetupError(`${message}\n\n${usage.trimEnd()}`, 2);
}
