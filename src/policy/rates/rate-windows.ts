// `limits.rate` (SPEC section 4.1): call-rate windows per principal, from
// every enforced layer. A window counts a principal's calls to the tools its
// globs (and class) name, together, in fixed windows of `per`. Layers only
// tighten: every window of every layer applies, and windows for the same
// tools, class and `per` are one window with the smallest `calls` (the others
// would only cost a second count of the same calls).
import { createHash } from 'node:crypto';
import type { Problem } from '../../config/problem.js';
import type { SideEffect } from '../../registry/manifest.js';
import { matchGlob } from '../globs.js';
import { sourceAt } from '../merge.js';
import type { PolicyFile } from '../policy-model.js';
import { classList } from '../rules/compile-rules.js';
import type { RuleRef } from '../types.js';

/** One window in force. */
export interface RateWindow {
  /** Identifies the window in the store: a digest of its tools, class and length (not of its limit). */
  readonly key: string;
  readonly tools: readonly string[];
  /** Absent: every class. */
  readonly classes?: readonly SideEffect[];
  /** The window's length in milliseconds. */
  readonly perMs: number;
  /** Calls a principal may make in one window. */
  readonly calls: number;
  /** `file:line limits.rate`: the entry that set the smallest limit. */
  readonly rule: RuleRef;
  /** As written, for messages: `1m`. */
  readonly per: string;
}

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000 } as const;
/** Longest window (24 h): the schema bounds the number, this the product. */
const MAX_RATE_WINDOW_MS = 24 * 3_600_000;

/** The windows of every enforced file, merged; a window longer than 24 h is a problem (never silently dropped). */
export function readRateWindows(files: readonly PolicyFile[]): { windows: RateWindow[]; problems: Problem[] } {
  const byKey = new Map<string, RateWindow>();
  const problems: Problem[] = [];
  for (const file of files) {
    if (file.mode === 'shadow') continue;
    (file.data.limits?.rate ?? []).forEach((entry, index) => {
      const perMs = parsePerMs(entry.per);
      if (perMs === undefined) {
        problems.push(file.source.problemAt(['limits', 'rate', index, 'per'], `limits.rate: per must be at most 24h, got ${entry.per}`));
        return;
      }
      const tools = [...new Set(entry.tools)].sort();
      const classes = entry.class === undefined ? undefined : [...classList(entry.class)].sort();
      const key = createHash('sha256')
        .update(JSON.stringify({ tools, classes: classes ?? null, perMs }))
        .digest('hex')
        .slice(0, 32);
      const source = sourceAt(file, ['limits', 'rate', index], 'limits.rate');
      const window: RateWindow = { key, tools, ...(classes ? { classes } : {}), perMs, calls: entry.calls, rule: source.rule, per: entry.per };
      const known = byKey.get(key);
      if (known === undefined || window.calls < known.calls) byKey.set(key, Object.freeze(window));
    });
  }
  return { windows: [...byKey.values()], problems };
}

/** The windows that count calls to this tool. */
export function windowsFor(windows: readonly RateWindow[], tool: string, sideEffect: SideEffect | undefined): readonly RateWindow[] {
  return windows.filter(
    (window) => window.tools.some((glob) => matchGlob(glob, tool)) && (window.classes === undefined || (sideEffect !== undefined && window.classes.includes(sideEffect))),
  );
}

/** `30s`, `1m`, `1h` in milliseconds; undefined for anything else or past 24 h. */
function parsePerMs(per: string): number | undefined {
  const match = /^([1-9][0-9]{0,4})(s|m|h)$/.exec(per);
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  return ms <= MAX_RATE_WINDOW_MS ? ms : undefined;
}
