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
