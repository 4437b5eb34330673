import pino, { type Logger } from 'pino';

/**
 * Paths pino blanks in every log line. Secrets are never meant to reach a log call, this is the
 * second fence: keys, tokens and passwords under any of these names print as [REDACTED].
 */
export const REDACTED_PATHS = [
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
  '*.headers.authorization',
  '*.*.headers.authorization',
  'token',
  '*.token',
  'accessToken',
  '*.accessToken',
  'secret',
  '*.secret',
  'providerConfig',
  '*.providerConfig',
];

export function createLogger(options: { level: string; name?: string }, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      name: options.name ?? 'parley',
      level: options.level,
      redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
      base: { service: options.name ?? 'parley' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}

export type { Logger };
