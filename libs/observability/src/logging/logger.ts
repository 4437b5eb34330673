import pino, { type DestinationStream, type Logger } from 'pino';
import { currentTraceId } from '../context/request-context';
import { activeTraceId } from '../tracing/tracing';
import { secretMasker, type SecretMasker } from './secret-masker';

/**
 * Paths pino blanks in every log line. Secrets are never meant to reach a log call, this is the
 * second fence: keys, tokens and passwords under any of these names print as [REDACTED]; the
 * third fence masks known secret values wherever they appear (see SecretMasker).
 */
const REDACTED_PATHS = [
  'apiKey',
  '*.apiKey',
  '*.*.apiKey',
  'api_key',
  '*.api_key',
  'password',
  '*.password',
  '*.*.password',
  'clientSecret',
  '*.clientSecret',
  '*.*.clientSecret',
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  '*.*.headers.authorization',
  'token',
  '*.token',
  'accessToken',
  '*.accessToken',
  'secret',
  '*.secret',
  'credentials',
  '*.credentials',
  '*.*.credentials',
  'encryptionKey',
  '*.encryptionKey',
  'adminApiKey',
  '*.adminApiKey',
  'providerConfig',
  '*.providerConfig',
];

export interface LoggerOptions {
  level: string;
  name?: string;
  masker?: SecretMasker;
}

/** Writes every finished line through the masker, so no field or message escapes it. */
function maskingDestination(target: DestinationStream, masker: SecretMasker): DestinationStream {
  return { write: (line: string) => target.write(masker.mask(line)) };
}

/**
 * The JSON logger of every Parley process. Each line carries `trace_id` (the active span's, or
 * the request context's) so one request can be followed from HTTP to the model and its tools.
 */
export function createLogger(options: LoggerOptions, destination?: DestinationStream): Logger {
  const target = destination ?? pino.destination({ dest: 1, sync: true });
  return pino(
    {
      name: options.name ?? 'parley',
      level: options.level,
      redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
      base: { service: options.name ?? 'parley' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: () => {
        const traceId = activeTraceId() ?? currentTraceId();
        return traceId ? { trace_id: traceId } : {};
      },
    },
    maskingDestination(target, options.masker ?? secretMasker),
  );
}

export type { Logger };
