// `--since` for toolhost audit: an ISO 8601 time or a duration back from now.

const UNIT_MS: Readonly<Record<string, number>> = {
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/**
 * ms since the epoch for "30s", "15m", "1h", "2d", "1w" (back from nowMs) or an
 * ISO 8601 date or date-time ("2026-11-29", "2026-11-29T13:00:00Z"); undefined when neither.
 */
export function parseSince(text: string, nowMs = Date.now()): number | undefined {
  const relative = /^(\d{1,9})([smhdw])$/.exec(text.trim());
  if (relative) {
    const [, amount, unit] = relative;
    return nowMs - Number(amount) * (UNIT_MS[unit ?? ''] ?? 0);
  }
  // Only ISO shapes: Date.parse accepts many locale formats we do not want to promise.
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(text.trim())) return undefined;
  const ms = Date.parse(text.trim());
  return Number.isNaN(ms) ? undefined : ms;
}
