// Pinned server tools whose server changed them while the host runs (SPEC
// section 4.2: "a server's list_changed that changes a pinned tool excludes it
// from that moment"). When a server's tools/list_changed is read again, each of
// its tools in force is compared with the tool its new listing makes; one that
// differs (or is gone) is refused from then on (policy_denied, reason
// definition_changed, both digests), and the diff is logged. The reload that
// follows builds a host that excludes it by its pin; this closes the window in
// between. Per host (host.ts builds one), never a module global.
import type { Logger } from '../log.js';
import { HostError } from '../errors.js';
import { diffDefinition } from '../registry/lock-diff.js';
import type { Manifest } from '../registry/manifest.js';
import type { ListedUpstreamTool, ServerListing } from '../registry/server-tools.js';
import { definitionOf, manifestDigest } from '../registry/tool-definition.js';
import type { RuleRef, ToolView } from './types.js';

/** Longest diff logged for one changed tool (characters). */
const MAX_LOGGED_DIFF_CHARS = 8_192;

/** What a drift check needs of the host's configuration. */
interface DriftSource {
  readonly tools: ReadonlyMap<string, ToolView>;
  readonly pinning: { readonly enforced: boolean; readonly rule: RuleRef };
  manifestsOfListing(server: string, listing: ServerListing): ReadonlyMap<string, Manifest>;
}

interface Drifted {
  readonly pinned: string;
  /** null: the server no longer lists the tool. */
  readonly current: string | null;
}

export class DefinitionDrift {
  /** By listed name; empty while every server lists what was pinned (the usual case: one Map.get per call). */
  readonly #drifted = new Map<string, Drifted>();

  constructor(
    private readonly source: DriftSource,
    private readonly logger: Logger,
    /** Bounds and redacts what a server wrote before the log gets it. */
    private readonly redact: (text: string, maxChars: number) => string = (text, maxChars) => text.slice(0, maxChars),
  ) {}

  /** A server listed its tools again (after tools/list_changed): compare each pinned tool in force. */
  relisted(server: string, tools: readonly ListedUpstreamTool[]): void {
    if (!this.source.pinning.enforced) return;
    const listing: ServerListing = { ok: true, tools, truncated: false };
    const now = this.source.manifestsOfListing(server, listing);
    for (const view of this.source.tools.values()) {
      if (view.manifest.upstream?.server !== server || view.exclusion) continue;
      const name = view.manifest.name;
      const changed = now.get(name);
      const current = changed === undefined ? null : manifestDigest(changed);
      if (current === view.definitionDigest) {
        if (this.#drifted.delete(name)) this.logger.info({ server, tool: name }, 'upstream tool is back to its pinned definition');
        continue;
      }
      if (this.#drifted.get(name)?.current === current) continue;
      this.#drifted.set(name, { pinned: view.definitionDigest, current });
      const diff = changed === undefined ? 'the server no longer lists it' : (diffDefinition(definitionOf(view.manifest), definitionOf(changed))?.diff ?? '');
      this.logger.warn(
        { server, tool: name, pinned: view.definitionDigest, current, diff: this.redact(diff, MAX_LOGGED_DIFF_CHARS) },
        'upstream tool changed its definition: refused until toolhost lock pins it again',
      );
    }
  }

  /** Throws policy_denied (definition_changed) when the tool's server changed it since it was pinned. */
  check(view: ToolView): void {
    if (this.#drifted.size === 0) return;
    const drifted = this.#drifted.get(view.manifest.name);
    if (drifted === undefined) return;
    const rule = this.source.pinning.rule;
    throw new HostError(
      'policy_denied',
      `The tool ${view.manifest.name} is excluded by policy rule ${rule}: its server changed its definition since it was pinned; review the change (toolhost lock --check) and run toolhost lock to accept it.`,
      { rule, reason: 'definition_changed', pinned: drifted.pinned, current: drifted.current },
    );
  }

  /** After an approval was given: throws approval_denied when the definition changed while the person was asked. */
  checkApproved(view: ToolView): void {
    if (this.#drifted.size === 0 || !this.#drifted.has(view.manifest.name)) return;
    throw new HostError('approval_denied', `The approval for ${view.manifest.name} was given for a definition its server has since changed.`, {
      rule: this.source.pinning.rule,
      reason: 'definition_changed',
    });
  }
}
