// Glob matching for policy keys: tool names, env names, hosts and manifest
// paths. Small on purpose: `*`, `**` and `?` only, no braces or classes, so a
// policy author can predict every match.

interface GlobOptions {
  /** Paths: `*` and `?` stop at `/`, `**` crosses it. Otherwise `*` matches anything. */
  readonly path?: boolean;
  /** Env secret names are matched without regard to case: `github_token` is still a token. */
  readonly ignoreCase?: boolean;
}

/** True when `text` matches `pattern` as a whole. */
export function matchGlob(pattern: string, text: string, options: GlobOptions = {}): boolean {
  return compileGlob(pattern, options).test(text);
}

/** The first pattern of `patterns` that matches `text`, if any. */
export function findMatch<T extends { readonly value: string }>(patterns: readonly T[], text: string, options: GlobOptions = {}): T | undefined {
  return patterns.find((pattern) => matchGlob(pattern.value, text, options));
}

const cache = new Map<string, RegExp>();

/** The regular expression `matchGlob` tests with (cached), for callers that match one glob many times. */
export function globRegExp(pattern: string, options: GlobOptions = {}): RegExp {
  return compileGlob(pattern, options);
}

function compileGlob(pattern: string, options: GlobOptions): RegExp {
  const cacheKey = `${options.path ? 'p' : '-'}${options.ignoreCase ? 'i' : '-'}${pattern}`;
  const cached = cache.get(cacheKey);
  if (cached) return cached;
  let source = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const char = pattern[i] ?? '';
    if (char === '*') {
      if (options.path && pattern[i + 1] === '*') {
        // `**/` also matches zero folders, so `manifests/**/x.yaml` matches `manifests/x.yaml`.
        if (pattern[i + 2] === '/') {
          source += '(?:.*/)?';
          i += 2;
        } else {
          source += '.*';
          i += 1;
        }
      } else {
        source += options.path ? '[^/]*' : '.*';
      }
    } else if (char === '?') {
      source += options.path ? '[^/]' : '.';
    } else {
      source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
  }
  const regex = new RegExp(`^${source}$`, options.ignoreCase ? 'is' : 's');
  cache.set(cacheKey, regex);
  return regex;
}
