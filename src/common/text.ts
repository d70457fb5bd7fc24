/** "1 record", "2 records". */
export function plural(count: number, noun: string, pluralForm = `${noun}s`): string {
  return `${count.toLocaleString('en')} ${count === 1 ? noun : pluralForm}`;
}
