// locutus ships no types; these are the PHP ports gex uses.
declare module 'locutus/php/datetime/strtotime.js' {
  export default function strtotime(text: string, now?: number): number | false;
}
declare module 'locutus/php/datetime/gmdate.js' {
  export default function gmdate(format: string, timestamp?: number): string;
}
declare module 'locutus/php/strings/sprintf.js' {
  export default function sprintf(format: string, ...args: unknown[]): string | false;
}
