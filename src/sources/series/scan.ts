/**
 * A series body in exactly the documented form, read from its bytes instead of through
 * `JSON.parse`: `{"host_uuid": "...", "since": "...", "interval": 60, "series": {"<name>":
 * [{"timestamp": "...", "value": 1.5 | null}, ...]}}`, keys in any order, any JSON white space.
 * A series body is almost all points, and every host's body of one poll repeats the same
 * timestamps at the same positions: the text of a timestamp that matches the bytes seen at
 * its position before is that same string, not a new one, and a metric's points come out as
 * columns (points.ts): its values in one array, its times one array shared by every metric of
 * the body with as many points. A point written as an encoder writes it (no white space,
 * `timestamp` first) is matched byte for byte against its position's time, without reading it
 * key by key; metric names are made once and taken again by their bytes. The points are what
 * `JSON.parse` gives for such a body (a property test holds them equal, through
 * `SeriesPoints.toPoints`); anything else (another key, an escape in a string, a nested value;
 * a number beyond the exact fast path is still read exactly) returns undefined, and the body
 * goes through `JSON.parse` and the tolerant decoder as any other.
 */

import { GAP, SeriesPoints } from './points.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_LIST = 0x5b;
const CLOSE_LIST = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

/** Key names as bytes, to compare without making strings. */
const KEYS = {
  host_uuid: Buffer.from('host_uuid'),
  since: Buffer.from('since'),
  interval: Buffer.from('interval'),
  series: Buffer.from('series'),
  timestamp: Buffer.from('timestamp'),
  value: Buffer.from('value'),
};

/** How a server's encoder writes a point, around its time: `{"timestamp":"` and `","value":`. */
const POINT_HEAD = Buffer.from('{"timestamp":"');
const POINT_MIDDLE = Buffer.from('","value":');

/** Exact powers of ten: a decimal of at most 15 digits divided by one of them is correctly rounded. */
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, n) => 10 ** n);

class NotDocumented extends Error {}
const NOT_DOCUMENTED = new NotDocumented();

/**
 * A point as an encoder writes it with a given time, up to its value (`{"timestamp":"<time>",
 * "value":`), to match a body against: as little-endian 32-bit words, read four bytes at a time
 * (a quarter of the comparisons a byte at a time takes, and most of a point's bytes are these),
 * and the bytes after the last whole word.
 */
class CompactHead {
  readonly length: number;
  private readonly words: Uint32Array;
  private readonly tail: Uint8Array;

  constructor(time: Uint8Array) {
    const bytes = Buffer.concat([POINT_HEAD, time, POINT_MIDDLE]);
    const whole = bytes.length >> 2;
    this.length = bytes.length;
    this.words = new Uint32Array(whole);
    for (let i = 0; i < whole; i++) this.words[i] = bytes.readUInt32LE(i * 4);
    this.tail = Uint8Array.from(bytes.subarray(whole * 4));
  }

  /** Whether the body holds exactly these bytes from `start`. */
  matches(body: Buffer, view: DataView, start: number): boolean {
    if (start + this.length > body.length) return false;
    const words = this.words;
    let at = start;
    for (let i = 0; i < words.length; i++, at += 4) if (view.getUint32(at, true) !== words[i]) return false;
    const tail = this.tail;
    for (let i = 0; i < tail.length; i++, at++) if (body[at] !== tail[i]) return false;
    return true;
  }
}

/** The timestamp texts seen at each position, with their bytes, shared by every body read. */
class PositionTexts {
  private readonly bytes: Buffer[] = [];
  private readonly texts: string[] = [];
  private readonly heads: CompactHead[] = [];
  /** The texts of the first n positions as they are now, by n: dropped whenever a position takes another text. */
  private readonly prefixes = new Map<number, readonly string[]>();

  /**
   * The times of a list of `length` points just read: every point took its position's text
   * (`text` records each one), so they are the first `length` positions' texts, one array for
   * every list that has them.
   */
  timesOf(length: number): readonly string[] {
    let times = this.prefixes.get(length);
    if (times === undefined) this.prefixes.set(length, (times = this.texts.slice(0, length)));
    return times;
  }

  /** How an encoder writes a point with the text seen at the position, if any, up to its value. */
  compactHead(position: number): CompactHead | undefined {
    return this.heads[position];
  }

  text(body: Buffer, start: number, end: number, position: number): string {
    const known = this.bytes[position];
    const length = end - start;
    if (known !== undefined && known.length === length) {
      let same = true;
      for (let i = 0; i < length; i++) {
        if (known[i] !== body[start + i]) {
          same = false;
          break;
        }
      }
      if (same) return this.texts[position] as string;
    }
    for (let i = start; i < end; i++) if ((body[i] as number) >= 0x80) throw NOT_DOCUMENTED;
    const text = body.toString('latin1', start, end);
    // Positions come in order from 0, so every text read is recorded and `timesOf` holds.
    const bytes = Buffer.from(body.subarray(start, end));
    this.bytes[position] = bytes;
    this.texts[position] = text;
    this.heads[position] = new CompactHead(bytes);
    this.prefixes.clear();
    return text;
  }
}

const TIMES = new PositionTexts();
/**
 * Metric names, interned by their bytes: every host of an account sends mostly the same names,
 * poll after poll, and a name made once is not decoded again (its hash is kept with it too,
 * for the mapper's lookups).
 */
class NameTexts {
  private readonly byHash = new Map<number, { readonly bytes: Buffer; readonly text: string }>();

  text(body: Buffer, start: number, end: number): string {
    let hash = 0x811c9dc5;
    for (let i = start; i < end; i++) hash = Math.imul(hash ^ (body[i] as number), 0x01000193);
    const known = this.byHash.get(hash);
    const length = end - start;
    if (known !== undefined && known.bytes.length === length) {
      const bytes = known.bytes;
      let i = 0;
      while (i < length && bytes[i] === body[start + i]) i++;
      if (i === length) return known.text;
    }
    const text = body.toString('utf8', start, end);
    if (this.byHash.size >= 4096) this.byHash.clear();
    this.byHash.set(hash, { bytes: Buffer.from(body.subarray(start, end)), text });
    return text;
  }
}

const NAMES = new NameTexts();

/**
 * A list's values while it is read, reused list after list: pushed one by one into an array of
 * its own, a list of 60 values grows through three ever larger copies; it is copied once, at
 * its length, when the list ends.
 */
const READING: number[] = [];

export interface ScannedSeriesBody {
  host_uuid?: string;
  since?: string;
  interval?: number;
  series?: Record<string, SeriesPoints>;
}

class Scanner {
  at = 0;
  /** The body's bytes as words too, for `CompactHead`. */
  private readonly view: DataView;
  constructor(private readonly body: Buffer) {
    this.view = new DataView(body.buffer, body.byteOffset, body.length);
  }

  space(): number {
    const body = this.body;
    let at = this.at;
    for (;;) {
      const c = body[at];
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) at++;
      else {
        this.at = at;
        if (c === undefined) throw NOT_DOCUMENTED;
        return c;
      }
    }
  }

  expect(c: number): void {
    if (this.space() !== c) throw NOT_DOCUMENTED;
    this.at++;
  }

  /** The bytes of a string without escapes: [start, end) of its content; the cursor after its closing quote. */
  stringBounds(): number {
    if (this.space() !== QUOTE) throw NOT_DOCUMENTED;
    const body = this.body;
    const start = ++this.at;
    let at = start;
    for (;;) {
      const c = body[at];
      if (c === QUOTE) break;
      if (c === undefined || c === BACKSLASH || c < 0x20) throw NOT_DOCUMENTED;
      at++;
    }
    this.at = at + 1;
    return start;
  }

  string(): string {
    const start = this.stringBounds();
    return this.body.toString('utf8', start, this.at - 1);
  }

  /** Whether the string before the cursor's last string end, from `start`, is `key`. */
  keyIs(start: number, end: number, key: Buffer): boolean {
    const length = end - start;
    if (length !== key.length) return false;
    for (let i = 0; i < length; i++) if (this.body[start + i] !== key[i]) return false;
    return true;
  }

  /** A JSON number, or null. */
  numberOrNull(): number | null {
    const body = this.body;
    let c = this.space();
    if (c === 0x6e) {
      if (body[this.at + 1] !== 0x75 || body[this.at + 2] !== 0x6c || body[this.at + 3] !== 0x6c) throw NOT_DOCUMENTED;
      this.at += 4;
      return null;
    }
    const start = this.at;
    let at = start;
    const negative = c === MINUS;
    if (negative) c = body[++at] as number;
    if (c === undefined || c < ZERO || c > NINE) throw NOT_DOCUMENTED;
    let mantissa = 0;
    let digits = 0;
    let scale = 0;
    if (c === ZERO) {
      at++;
    } else {
      while (c >= ZERO && c <= NINE) {
        mantissa = mantissa * 10 + (c - ZERO);
        digits++;
        c = body[++at] as number;
      }
    }
    c = body[at] as number;
    if (c === DOT) {
      c = body[++at] as number;
      if (!(c >= ZERO && c <= NINE)) throw NOT_DOCUMENTED;
      while (c >= ZERO && c <= NINE) {
        mantissa = mantissa * 10 + (c - ZERO);
        if (mantissa !== 0) digits++;
        scale++;
        c = body[++at] as number;
      }
    }
    let exact = digits <= 15 && scale <= 22;
    if (c === 0x65 || c === 0x45) {
      exact = false;
      c = body[++at] as number;
      if (c === PLUS || c === MINUS) c = body[++at] as number;
      if (!(c >= ZERO && c <= NINE)) throw NOT_DOCUMENTED;
      while (c >= ZERO && c <= NINE) c = body[++at] as number;
    }
    this.at = at;
    if (exact) {
      const magnitude = mantissa / (POWERS_OF_TEN[scale] as number);
      return negative ? -magnitude : magnitude;
    }
    return Number(body.toString('latin1', start, at));
  }

  /** `,` (true) or the closing byte (false) after an item. */
  more(close: number): boolean {
    const c = this.space();
    this.at++;
    if (c === COMMA) return true;
    if (c === close) return false;
    throw NOT_DOCUMENTED;
  }

  /**
   * A point written exactly `{"timestamp":"<the text seen at its position>","value":<number or
   * null>}` (as a server's JSON encoder writes it, every point of every body alike), matched
   * byte for byte, its value put at its position in the list being read; false, the cursor
   * unmoved, for any other spelling, which `points` then reads key by key.
   */
  compactPoint(position: number): boolean {
    const body = this.body;
    const start = this.at;
    const head = TIMES.compactHead(position);
    if (head === undefined || !head.matches(body, this.view, start)) return false;
    this.at = start + head.length;
    const value = this.numberOrNull();
    if (body[this.at] !== CLOSE_OBJECT) {
      this.at = start;
      return false;
    }
    this.at++;
    READING[position] = value ?? GAP;
    return true;
  }

  points(): SeriesPoints {
    this.expect(OPEN_LIST);
    if (this.space() === CLOSE_LIST) {
      this.at++;
      return new SeriesPoints(TIMES.timesOf(0), [], true);
    }
    let count = 0;
    do {
      if (this.space() === OPEN_OBJECT && this.compactPoint(count)) {
        count++;
        continue;
      }
      this.expect(OPEN_OBJECT);
      let timestamp = false;
      let value: number | null | undefined;
      do {
        const key = this.stringBounds();
        const keyEnd = this.at - 1;
        this.expect(COLON);
        if (!timestamp && this.keyIs(key, keyEnd, KEYS.timestamp)) {
          const start = this.stringBounds();
          TIMES.text(this.body, start, this.at - 1, count);
          timestamp = true;
        } else if (value === undefined && this.keyIs(key, keyEnd, KEYS.value)) {
          value = this.numberOrNull();
        } else {
          throw NOT_DOCUMENTED;
        }
      } while (this.more(CLOSE_OBJECT));
      if (!timestamp || value === undefined) throw NOT_DOCUMENTED;
      READING[count++] = value ?? GAP;
    } while (this.more(CLOSE_LIST));
    return new SeriesPoints(TIMES.timesOf(count), READING.slice(0, count), true);
  }

  seriesMap(): Record<string, SeriesPoints> {
    this.expect(OPEN_OBJECT);
    if (this.space() === CLOSE_OBJECT) {
      this.at++;
      return {};
    }
    const entries: [string, SeriesPoints][] = [];
    do {
      const start = this.stringBounds();
      const name = NAMES.text(this.body, start, this.at - 1);
      // An own key of this name would need defineProperty; JSON.parse reads such bodies.
      if (name === '__proto__') throw NOT_DOCUMENTED;
      this.expect(COLON);
      entries.push([name, this.points()]);
    } while (this.more(CLOSE_OBJECT));
    // Made at once, as JSON.parse makes it: an object given its keys one by one is turned into
    // a dictionary past a few dozen, which every later pass over its names (`for...in`) pays for.
    return Object.fromEntries(entries);
  }

  envelope(): ScannedSeriesBody {
    this.expect(OPEN_OBJECT);
    const body: ScannedSeriesBody = {};
    if (this.space() === CLOSE_OBJECT) throw NOT_DOCUMENTED;
    do {
      const key = this.stringBounds();
      const keyEnd = this.at - 1;
      this.expect(COLON);
      if (this.keyIs(key, keyEnd, KEYS.series)) body.series = this.seriesMap();
      else if (this.keyIs(key, keyEnd, KEYS.interval)) {
        const interval = this.numberOrNull();
        if (interval === null) throw NOT_DOCUMENTED;
        body.interval = interval;
      } else if (this.keyIs(key, keyEnd, KEYS.since)) body.since = this.string();
      else if (this.keyIs(key, keyEnd, KEYS.host_uuid)) body.host_uuid = this.string();
      else throw NOT_DOCUMENTED;
    } while (this.more(CLOSE_OBJECT));
    for (let at = this.at; at < this.body.length; at++) {
      const c = this.body[at];
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) throw NOT_DOCUMENTED;
    }
    return body;
  }
}

/** The body as `JSON.parse` would give it (its points as columns), when it is a documented series body; else undefined. */
export function scanSeriesBody(body: Buffer): ScannedSeriesBody | undefined {
  try {
    return new Scanner(body).envelope();
  } catch (error) {
    if (error === NOT_DOCUMENTED) return undefined;
    throw error;
  }
}
