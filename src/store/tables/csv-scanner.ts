import { UserError } from '../../common/errors.js';
import { displayText } from '../../common/log-text.js';

const LF = 10;
const CR = 13;
/** slack for delimiters in the bound of a record's text */
const MAX_FIELDS = 100_000;

const enum State {
  /** at the start of a field: a quote opens a quoted value */
  FieldStart,
  Unquoted,
  Quoted,
  /** an enclosure inside a quoted value: doubled (a literal one) or the closing one */
  QuoteInQuoted,
}

/**
 * A streaming CSV parser for Keboola's format (RFC 4180 with a chosen delimiter and enclosure):
 * a value in enclosures may hold delimiters, line breaks and doubled enclosures; records end at
 * LF, CRLF or CR; an empty line is a record of one empty value; a leading BOM is dropped. Text
 * arrives in chunks of any size (a record, a value, a CRLF may span chunks) and records leave
 * through `onRecord` with the line they end on.
 *
 * It exists for speed: a load's parse is most of its time, and this scans several times faster
 * than a general parser (indexOf over quoted values, a tight loop over plain ones).
 */
export class CsvScanner {
  private readonly delimiter: number;
  private readonly enclosure: number;
  private readonly enclosureText: string;
  private state = State.FieldStart;
  private record: string[] = [];
  private field = '';
  private recordChars = 0;
  private line = 1;
  /** the last chunk ended with CR: an LF opening the next one belongs to it */
  private afterCr = false;
  private started = false;
  /** records leave as their text (fields only counted) rather than as their values */
  private rawSink: ((text: string, fields: number, line: number) => void) | null = null;
  /** raw mode: the fields of the record so far, and its text in the chunks before this one */
  private fields = 0;
  private carry = '';

  constructor(
    delimiter: string,
    enclosure: string,
    private readonly label: string,
    private readonly maxRecordChars: number,
    private readonly onRecord: (record: string[], line: number) => void,
  ) {
    if (delimiter.length !== 1 || enclosure.length !== 1)
      throw new RangeError('delimiter and enclosure are one UTF-16 code unit each');
    this.delimiter = delimiter.charCodeAt(0);
    this.enclosure = enclosure.charCodeAt(0);
    this.enclosureText = enclosure;
  }

  /**
   * From the next record on, records leave through `sink` as their text (without the line break
   * that ends them; a BOM dropped) with their field count, and no values are built: for a bulk
   * path that reads the same CSV dialect itself. Call it before the first chunk or from `onRecord`.
   */
  emitRecordText(sink: (text: string, fields: number, line: number) => void): void {
    this.rawSink = sink;
  }

  push(chunk: string): void {
    let i = 0;
    const n = chunk.length;
    if (!this.started && n > 0) {
      this.started = true;
      if (chunk.charCodeAt(0) === 0xfeff) i = 1;
    }
    if (this.afterCr && i < n) {
      this.afterCr = false;
      if (chunk.charCodeAt(i) === LF) i++;
    }
    /** where the current record's text starts in this chunk (its earlier text is in `carry`) */
    let from = i;
    const d = this.delimiter;
    const q = this.enclosure;
    while (i < n) {
      if (this.state === State.Quoted) {
        const close = chunk.indexOf(this.enclosureText, i);
        const end = close < 0 ? n : close;
        this.append(chunk, i, end);
        this.countLines(chunk, i, end);
        if (close < 0) break;
        this.state = State.QuoteInQuoted;
        i = close + 1;
        continue;
      }
      if (this.state === State.QuoteInQuoted) {
        const c = chunk.charCodeAt(i);
        if (c === q) {
          this.append(this.enclosureText, 0, 1);
          this.state = State.Quoted;
          i++;
          continue;
        }
        if (c !== d && c !== LF && c !== CR)
          this.fail(`a character after a closing ${this.quoted()} other than the delimiter or a line break`);
        this.state = State.Unquoted; // the scan below ends the value at once
      }
      if (this.state === State.FieldStart && chunk.charCodeAt(i) === q) {
        this.state = State.Quoted;
        i++;
        continue;
      }
      let j = i;
      let c = 0;
      for (; j < n; j++) {
        c = chunk.charCodeAt(j);
        if (c === d || c === LF || c === CR || c === q) break;
      }
      this.append(chunk, i, j);
      if (j === n) {
        this.state = State.Unquoted;
        break;
      }
      if (c === q)
        this.fail(
          `a ${this.quoted()} inside a value not enclosed in ${this.quoted()}s; enclose the value and double the ${this.quoted()}s in it`,
        );
      this.endField();
      this.state = State.FieldStart;
      i = j + 1;
      if (c !== d) {
        if (this.rawSink) this.endRawRecord(this.carry + chunk.slice(from, j));
        else this.endRecord();
        this.line++;
        if (c === CR) {
          if (i === n) this.afterCr = true;
          else if (chunk.charCodeAt(i) === LF) i++;
        }
        from = i;
      }
    }
    if (this.rawSink && from < n) {
      this.carry += chunk.slice(from);
      // delimiters and enclosures are not counted in recordChars: bound the text itself too
      if (this.carry.length > 2 * this.maxRecordChars + MAX_FIELDS)
        this.fail(`a record longer than ${this.maxRecordChars} characters`);
    }
  }

  /** The end of the text: the last record needs no line break after it. */
  end(): void {
    if (this.state === State.Quoted)
      this.fail(`a value opened with ${this.quoted()} is not closed before the end of the file`);
    if (this.rawSink) {
      if (this.state === State.FieldStart && this.fields === 0) return;
      this.endField();
      this.endRawRecord(this.carry);
      return;
    }
    if (this.state === State.FieldStart && this.record.length === 0) return;
    this.endField();
    this.endRecord();
  }

  private append(text: string, from: number, to: number): void {
    if (to === from) return;
    this.recordChars += to - from;
    if (this.recordChars > this.maxRecordChars) this.fail(`a record longer than ${this.maxRecordChars} characters`);
    if (this.rawSink) return;
    this.field += from === 0 && to === text.length ? text : text.slice(from, to);
  }

  private endField(): void {
    if (this.rawSink) {
      this.fields++;
      return;
    }
    this.record.push(this.field);
    this.field = '';
  }

  private endRawRecord(text: string): void {
    const fields = this.fields;
    this.fields = 0;
    this.carry = '';
    this.recordChars = 0;
    this.rawSink!(text, fields, this.line);
  }

  private endRecord(): void {
    const record = this.record;
    this.record = [];
    this.recordChars = 0;
    this.onRecord(record, this.line);
  }

  private countLines(text: string, from: number, to: number): void {
    for (let k = from; k < to; k++) if (text.charCodeAt(k) === LF) this.line++;
  }

  private quoted(): string {
    return JSON.stringify(this.enclosureText);
  }

  private fail(problem: string): never {
    throw new UserError(
      'GEX_TABLE_LOAD_REFUSED',
      `${displayText(this.label)}: invalid CSV on line ${this.line}: ${problem}.`,
    );
  }
}
