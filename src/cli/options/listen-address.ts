import { displayText } from '../../common/log-text.js';

/** A host and port to listen on, as `--metrics-listen` gives them. */
export interface ListenAddress {
  host: string;
  port: number;
}

const HOST_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})$/;
const IPV6 = /^[0-9A-Fa-f:.]{2,45}$/;

/**
 * `HOST:PORT` (`127.0.0.1:9464`, `0.0.0.0:9464`, `[::1]:9464`, `localhost:0`) as a host and a
 * port; an Error saying what is wrong and how to write it otherwise.
 */
export function parseListenAddress(value: string, option: string): ListenAddress {
  const example = `e.g. ${option} 127.0.0.1:9464 (this machine) or ${option} 0.0.0.0:9464 (every interface)`;
  const bad = (why: string) => new Error(`${option} takes HOST:PORT, ${why}: ${example}`);
  if (value.length > 300) throw bad('got a value too long to be one');
  const match = /^(?:\[([^\]]*)\]|([^:[\]]*)):([^:]*)$/.exec(value);
  if (!match) throw bad(`got ${displayText(value)}`);
  const [, v6, name, portText] = match;
  const host = v6 ?? name;
  if (host === '') throw bad(`got no host in ${displayText(value)}`);
  if (v6 !== undefined ? !IPV6.test(host) || !host.includes(':') : !HOST_NAME.test(host))
    throw bad(`got ${displayText(host)}, which is no host name or IP address`);
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535)
    throw bad(`its port a whole number from 0 to 65535 (0: any free port), got ${displayText(portText)}`);
  return { host, port: Number(portText) };
}

/** A yargs option of type string holding a listen address (checked as the line is read). */
export function listenAddressOption(
  name: string,
  describe: string,
): { type: 'string'; describe: string; coerce: (value: unknown) => ListenAddress | undefined } {
  return {
    type: 'string',
    describe,
    coerce: (value: unknown) => {
      // given without a value, an empty one, or negated: missingValueProblem says so once the line is read
      if (value === undefined || typeof value === 'boolean' || String(value).trim() === '') return undefined;
      if (Array.isArray(value)) throw new Error(`--${name} takes one value, got ${value.length}`);
      return parseListenAddress(String(value), `--${name}`);
    },
  };
}
