// Call ids as RFC 9562 UUID version 7: a 48-bit Unix millisecond timestamp
// first, then the version, a 12-bit counter (rand_a), the variant and 62
// random bits (rand_b) from the crypto generator. Why not v4: the journal's
// `calls.id` is UNIQUE, and a batch of random ids lands each record on a
// different leaf page of that index: a batch of 60 read-only records wrote
// ~90 pages to the WAL (journal of 30k calls), ~24 with ids that grow with
// time, which are appended to the index's last pages instead. The writer
// thread's CPU per record (60-record batches, v4 and v7 interleaved in one
// process): ~34 -> ~22 µs on a new journal, ~40 -> ~19 on one of 150k calls.
//
// Monotonic within the process (RFC 9562 section 6.2, method 1, a fixed
// 12-bit counter in rand_a): each new millisecond seeds the counter with 11
// random bits (the top bit 0, so at least 2048 ids fit before it rolls over);
// while the clock stands still, or goes back, the last timestamp is kept and
// the counter counts up; when it would roll over, the timestamp is moved one
// millisecond ahead. So every id is greater than the one before and none
// repeats. Still unguessable: 62 fresh random bits in every id (plus the
// counter's 11-bit seed at each new millisecond). What a v7 id gives away
// beyond a v4 one is when the call started, which its client knows already.
import { randomFillSync } from 'node:crypto';

/** Makes one call id; each is greater (as a string, too: lowercase hex of fixed width) than the one before. */
type CallIdSource = () => string;

/** A generator of v7 ids over `clock` (ms since the epoch); tests give it a clock that stands still or steps back. */
export function createCallIdSource(clock: () => number = Date.now): CallIdSource {
  let lastMs = -1;
  let counter = 0;
  return () => {
    const now = Math.floor(clock());
    if (now > lastMs) {
      lastMs = now;
      counter = randomCounterSeed();
    } else if (counter < MAX_COUNTER) {
      counter++;
    } else {
      // Rolled over within one millisecond: borrow the next one (RFC 9562 6.2, counter rollover handling).
      lastMs++;
      counter = randomCounterSeed();
    }
    return format(lastMs, counter);
  };
}

/** The process's call ids (one sequence for all calls, so their order is the order they were made). */
export const newCallId: CallIdSource = createCallIdSource();

const MAX_COUNTER = 0xfff;
/** Largest timestamp a v7 id holds (48 bits, the year 10889). */
const MAX_MS = 2 ** 48 - 1;

// Random bytes are drawn in blocks, as randomUUID() does, not one call into OpenSSL per id.
const POOL = Buffer.alloc(8 * 256);
let poolAt = POOL.length;

function take(count: number): number {
  if (poolAt + count > POOL.length) {
    randomFillSync(POOL);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += count;
  return at;
}

function randomCounterSeed(): number {
  const at = take(2);
  return ((POOL[at]! << 8) | POOL[at + 1]!) & 0x7ff;
}

/** The hex digits' character codes. */
const DIGITS = Buffer.from('0123456789abcdef', 'latin1');
/** The 36 characters of the id being formatted (the dashes stay where they are written once). */
const OUT = Buffer.from('00000000-0000-7000-8000-000000000000', 'latin1');

/** Writes `byte` as two hex digits at `at` of OUT; returns the next position. */
function hex(at: number, byte: number): number {
  OUT[at] = DIGITS[byte >>> 4]!;
  OUT[at + 1] = DIGITS[byte & 0xf]!;
  return at + 2;
}

// Digit by digit into one reused buffer, then one string: every call takes an id,
// so making one leaves no intermediate strings behind (the host's CPU per call:
// `npm run bench -- --only latency`).
function format(ms: number, counter: number): string {
  if (ms > MAX_MS || ms < 0) throw new RangeError(`a UUIDv7 timestamp must fit 48 bits, got ${ms}`);
  const high = Math.floor(ms / 0x1000000); // the top 24 bits; bitwise operators see only 32
  const low = ms % 0x1000000;
  const at = take(8);
  const b = POOL;
  hex(hex(hex(0, high >>> 16), (high >>> 8) & 0xff), high & 0xff);
  hex(6, low >>> 16);
  hex(hex(9, (low >>> 8) & 0xff), low & 0xff);
  hex(hex(14, 0x70 | (counter >>> 8)), counter & 0xff);
  hex(hex(19, (b[at]! & 0x3f) | 0x80), b[at + 1]!);
  let to = 24;
  for (let i = 2; i < 8; i++) to = hex(to, b[at + i]!);
  return OUT.toString('latin1', 0, 36);
}
