import type { Argv } from 'yargs';

/** `--change-description`: the options of every command that makes a new version. */
export const describedChange = <T>(y: Argv<T>) =>
  y.option('change-description', { type: 'string', describe: 'the description of the new version' }) as Argv<
    T & { 'change-description'?: string }
  >;
