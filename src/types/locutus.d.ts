// locutus ships no types; these are the PHP ports gex uses (sprintf is gex's own: src/php/sprintf.ts).
declare module 'locutus/php/datetime/strtotime.js' {
  export default function strtotime(text: string, now?: number): number | false;
}
declare module 'locutus/php/datetime/gmdate.js' {
  export default function gmdate(format: string, timestamp?: number): string;
}
