import { Transform, type TransformCallback } from 'node:stream';

/**
 * Counts the records of a CSV passing through (bytes unchanged): line ends outside the enclosure,
 * plus a last line without one. An enclosure inside a value is doubled (Keboola's CSV), so
 * toggling on each enclosure character is exact. Empty lines are not records. One pass, constant memory.
 */
export class CsvRecordCount extends Transform {
  private quoted = false;
  private lineHasData = false;
  private count = 0;
  private readonly enclosure: number;

  constructor(enclosure = '"') {
    super();
    // an enclosure outside ASCII is not one byte: then only line ends count (-1 matches no byte)
    const code = enclosure.charCodeAt(0);
    this.enclosure = code < 0x80 ? code : -1;
  }

  /** Records seen so far (all of them once the stream has ended). */
  get records(): number {
    return this.count + (this.lineHasData ? 1 : 0);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (byte === this.enclosure) {
        this.quoted = !this.quoted;
        this.lineHasData = true;
      } else if (byte === 0x0a && !this.quoted) {
        if (this.lineHasData) this.count++;
        this.lineHasData = false;
      } else if (byte !== 0x0d || this.quoted) this.lineHasData = true;
    }
    callback(null, chunk);
  }
}
