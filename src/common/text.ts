/** "1 record", "2 records", "1,234 records". */
export function plural(count: number, noun: string, pluralForm = `${noun}s`): string {
  return `${groupThousands(count)} ${count === 1 ? noun : pluralForm}`;
}

/** 1234567 → "1,234,567" (toLocaleString would load ICU's number formatting, ~5 ms of start-up). */
export function groupThousands(n: number): string {
  const [whole, fraction] = String(n).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+$)/g, ',');
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

/** A size for people: whole mebibytes as "64 MiB", anything else in bytes ("1000 bytes"). */
export function describeBytes(bytes: number): string {
  return bytes > 0 && bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

/** A duration as a clock for people: 0:07, 12:34, 1:02:03 (whole seconds, rounded down). */
export function formatClock(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, '0');
  return hours > 0
    ? `${groupThousands(hours)}:${String(minutes).padStart(2, '0')}:${seconds}`
    : `${minutes}:${seconds}`;
}

/** Milliseconds as seconds with one decimal, thousands grouped: 1234567 → "1,234.6 s". */
export function formatSeconds(ms: number): string {
  const [whole, tenths] = (ms / 1000).toFixed(1).split('.');
  return `${groupThousands(Number(whole))}.${tenths} s`;
}

/**
 * `text` as a sentence that another may follow: ends in `.` unless it ends in `.`, `!`, `?` or `…`
 * already (messages of other errors often do), so that joining never gives "exists.. Nothing".
 */
export function sentence(text: string): string {
  const trimmed = text.trimEnd();
  return /[.!?…]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

/** A span for people: "800 ms", "45 s", "17 min 3 s", "2 h 5 min" (rounded down to its two largest units). */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return seconds % 60 ? `${minutes} min ${seconds % 60} s` : `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return minutes % 60 ? `${groupThousands(hours)} h ${minutes % 60} min` : `${groupThousands(hours)} h`;
}

/**
 * A moment as the local clock shows it: "14:49:12", with the date when it is not the day of `now`
 * ("2026-11-28 01:02:03").
 */
export function formatClockTime(at: number, now: number): string {
  const date = new Date(at);
  const two = (n: number) => String(n).padStart(2, '0');
  const time = `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
  if (new Date(now).toDateString() === date.toDateString()) return time;
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${time}`;
}
