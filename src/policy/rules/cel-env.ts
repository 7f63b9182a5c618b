// The CEL environment policy rules are written in (SPEC section 4.1): the
// variables a `when` may name (`args`, `tool`, `principal`, `workspace`), the
// `path.*` and `url.*` helpers, and the parse limits. One environment for every
// rule: it holds no per-host state (the helpers read theirs from the call's
// activation), so two hosts share it safely.
import { Environment } from '@marcbachmann/cel-js';
import { isPathUnder, isPathWithin, resolveToolPath, type PathBase } from './path-helpers.js';
import { urlHost, urlPort, urlScheme } from './url-helpers.js';

/** What `tool` holds in a rule. */
export class RuleTool {
  /** The side-effect class, or `unclassified`. */
  readonly class: string;

  constructor(
    readonly name: string,
    sideEffect: string,
    /** The upstream server's name; empty for a tool manifest. */
    readonly server: string,
  ) {
    this.class = sideEffect;
  }
}

/**
 * The receiver of `path.within` and `path.under`: where this tool's relative paths start.
 * One per call (forCall): several rules that judge the same argument resolve it once.
 */
export class PathHelpers {
  #last: { readonly p: unknown; readonly resolved: string } | undefined;

  constructor(readonly base: PathBase) {}

  /** A fresh receiver for one call, with its own memo. */
  forCall(): PathHelpers {
    return new PathHelpers(this.base);
  }

  /** resolveToolPath, remembered for the last path asked (a path that cannot be resolved is not remembered). */
  readonly resolve = (p: unknown, base: PathBase): string => {
    if (this.#last !== undefined && this.#last.p === p && base === this.base) return this.#last.resolved;
    const resolved = resolveToolPath(p, base);
    if (base === this.base) this.#last = { p, resolved };
    return resolved;
  };
}

/** The receiver of `url.host`, `url.port` and `url.scheme` (stateless). */
class UrlHelpers {}

/** The one `url` value every activation carries. */
export const URL_HELPERS = new UrlHelpers();

/** The variables a rule's activation binds. */
export interface RuleActivation {
  readonly args: Readonly<Record<string, unknown>>;
  readonly tool: RuleTool;
  /** The HTTP principal; empty on stdio. */
  readonly principal: string;
  readonly workspace: string;
  readonly path: PathHelpers;
  readonly url: UrlHelpers;
}

/** Largest `path.within` written with separate globs; more take a list: `path.within(p, ["a/**", ...])`. */
const MAX_WITHIN_GLOBS = 8;

/** Parse limits: a rule is a short condition, not a program. */
const RULE_LIMITS = { maxAstNodes: 2_000, maxDepth: 64, maxListElements: 256, maxMapEntries: 256, maxCallArguments: MAX_WITHIN_GLOBS + 1 } as const;

let environment: Environment | undefined;

/** The shared environment, built on first use. */
export function ruleEnvironment(): Environment {
  environment ??= buildEnvironment();
  return environment;
}

function buildEnvironment(): Environment {
  const env = new Environment({ limits: RULE_LIMITS, homogeneousAggregateLiterals: false })
    // A typed object: a misspelt field (tool.nmae) is an error at load, not a call that fails closed.
    .registerType('Tool', { ctor: RuleTool, fields: { name: 'string', class: 'string', server: 'string' } })
    .registerType('PathHelpers', PathHelpers)
    .registerType('UrlHelpers', UrlHelpers)
    .registerVariable('args', 'map')
    .registerVariable('tool', 'Tool')
    .registerVariable('principal', 'string')
    .registerVariable('workspace', 'string')
    .registerVariable('path', 'PathHelpers')
    .registerVariable('url', 'UrlHelpers');
  for (let count = 1; count <= MAX_WITHIN_GLOBS; count++) {
    const globs = Array.from({ length: count }, () => 'string').join(', ');
    env.registerFunction(`PathHelpers.within(dyn, ${globs}): bool`, (helpers: PathHelpers, p: unknown, ...rest: string[]) => isPathWithin(p, rest, helpers.base, helpers.resolve));
  }
  env.registerFunction('PathHelpers.within(dyn, list<string>): bool', (helpers: PathHelpers, p: unknown, globs: string[]) => isPathWithin(p, globs, helpers.base, helpers.resolve));
  env.registerFunction('PathHelpers.under(dyn, string): bool', (helpers: PathHelpers, p: unknown, dir: string) => isPathUnder(p, dir, helpers.base, helpers.resolve));
  env.registerFunction('UrlHelpers.host(dyn): string', (_: UrlHelpers, u: unknown) => urlHost(u));
  env.registerFunction('UrlHelpers.port(dyn): int', (_: UrlHelpers, u: unknown) => BigInt(urlPort(u)));
  env.registerFunction('UrlHelpers.scheme(dyn): string', (_: UrlHelpers, u: unknown) => urlScheme(u));
  return env;
}
