import { consoleLogger } from '../console-logger.js';
import type { Logger } from '../contract/logger.js';
import { InferenceError } from '../errors.js';
import { epochMicros, logDestination, logLine, type LogLevelLetter } from './log-lines.js';
import { checkLogSettings, DEFAULT_LOG_SETTINGS, type LogSettings } from './log-settings.js';

export interface ServerLoggerOptions {
  /** The settings to start with; those left out are Triton's defaults (DEFAULT_LOG_SETTINGS). */
  readonly settings?: Partial<LogSettings>;
  /**
   * Where the messages the settings let through go, instead of Triton's lines written to
   * `log_file` or standard error: `log_file` and `log_format` are then only reported.
   */
  readonly sink?: Logger;
}

/** Marks ServerLoggers across copies of this module, as InferenceError's brand does. */
const BRAND = Symbol.for('tritium.ServerLogger');

/**
 * The server's log: a Logger whose levels follow its settings, which can change while it
 * runs (server.updateLogSettings, Triton's /v2/logging). Without a sink it writes Triton's
 * lines itself, as the `tritium` command does.
 */
export class ServerLogger implements Logger {
  readonly [BRAND] = true;
  private current: LogSettings;
  private readonly sink: Logger;

  /** `instanceof` holds for a ServerLogger made by any copy of @tritium/core loaded in the process. */
  static [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true;
  }

  /** Throws INVALID_ARG for a bad setting, or the file system's error when `log_file` cannot be opened. */
  constructor(options: ServerLoggerOptions = {}) {
    this.current = Object.freeze({ ...DEFAULT_LOG_SETTINGS, ...checkLogSettings(options.settings ?? {}) });
    this.sink = options.sink ?? this.lineWriter(logDestination(this.current.log_file));
  }

  get settings(): LogSettings {
    return this.current;
  }

  /**
   * Changes the settings given and answers them all. Refused whole, with INVALID_ARG
   * naming the field at fault; `log_file` is UNSUPPORTED, as Triton refuses it, since the
   * destination is chosen once.
   */
  update(changes: Partial<LogSettings>): LogSettings {
    const checked = checkLogSettings(changes);
    if (checked.log_file !== undefined) throw new InferenceError('UNSUPPORTED', "log setting 'log_file' can not be updated: the log file is chosen when the logger is made");
    this.current = Object.freeze({ ...this.current, ...checked });
    return this.current;
  }

  /** Whether verbose messages of `level` show: checked before building a message that costs something (one per request). */
  isVerbose(level: number): boolean {
    return this.current.log_verbose_level >= level;
  }

  error(message: string): void {
    if (this.current.log_error) this.sink.error(message);
  }

  warn(message: string): void {
    if (this.current.log_warning) this.sink.warn(message);
  }

  info(message: string): void {
    if (this.current.log_info) this.sink.info(message);
  }

  /** A verbose message of `level` (1 unless given: a backend's, or a Python model's pb_utils.Logger.log_verbose, as Triton's are). */
  verbose(message: string, level = 1): void {
    if (this.current.log_verbose_level >= level) this.sink.verbose(message);
  }

  /** Triton's lines, in the format the settings say at the time of each. */
  private lineWriter(write: (line: string) => void): Logger {
    const line = (level: LogLevelLetter) => (message: string) => write(logLine(this.current.log_format, level, epochMicros(), message));
    return { error: line('E'), warn: line('W'), info: line('I'), verbose: line('V') };
  }
}

/** The server's ServerLogger for ServerOptions.logger: a ServerLogger as it is, any other Logger (the console's by default) behind one with Triton's default settings. */
export function serverLoggerOf(logger: Logger | undefined): ServerLogger {
  return logger instanceof ServerLogger ? logger : new ServerLogger({ sink: logger ?? consoleLogger });
}
