import { processRedactor } from '../lib/redact.js';

/** Everything the command line writes passes the redactor: an error may quote a configured key. */
export const stdout = (text: string): void => {
  process.stdout.write(processRedactor.scrub(text));
};
export const stderr = (text: string): void => {
  process.stderr.write(processRedactor.scrub(text));
};
