// The one inline budget of a result (SPEC section 5 step 9 and 5.1), for all
// three kinds of output (a plain value, an envelope's parts, an upstream
// server's blocks): blocks are placed in order while they fit; a block that
// does not fit is stored whole as an artifact and a resource_link takes its
// place, and the blocks after it still get their chance (a large block early
// does not hide small ones). What is left of the budget at the end goes, in
// order, to text previews of the spilled text blocks, cut on a character
// boundary. A block marked `alwaysStore` (an `artifact` part) is stored and
// linked whatever its size and costs nothing.
import type { ContentBlock } from '../types.js';
import type { ArtifactSink } from './staged.js';

/** One block of a result as the budget sees it. */
export interface BudgetBlock {
  /** The block shown inline when it fits. */
  readonly block: ContentBlock;
  /** Its cost: the UTF-8 bytes of its payload (the text, the base64 data, the JSON). */
  readonly bytes: number;
  /** The bytes a spill stores, whole (made only when it spills: decoding is not free). */
  readonly body: () => Uint8Array;
  readonly mimeType: string;
  /** The name of the resource_link that replaces it. */
  readonly name: string;
  /** What it is, for the link's description: "The result", "Part 2 of the result". */
  readonly what: string;
  /** Text a spilled block may show from the leftover budget. */
  readonly previewText?: string;
  /** Stored and linked whatever its size, with this description. */
  readonly alwaysStore?: { readonly description: string };
}

/** Where each block went: inline, or to the artifact store (with a preview when one fitted). */
type Placement =
  { readonly type: 'inline'; readonly block: ContentBlock } | { readonly type: 'stored'; readonly item: BudgetBlock; readonly spilled: boolean; readonly preview?: string };

export interface BudgetFit {
  readonly placements: readonly Placement[];
  /** A block did not fit (one that is always stored does not count). */
  readonly spilled: boolean;
  /** The content when nothing goes to the artifact store: a result within budget needs no promise. */
  readonly inline?: readonly ContentBlock[];
  readonly budgetBytes: number;
}

/** Places `blocks` in order within `budgetBytes`; the artifact store is only touched by storeSpills. */
export function fitWithinBudget(blocks: readonly BudgetBlock[], budgetBytes: number): BudgetFit {
  let remainingBytes = budgetBytes;
  let spilled = false;
  let stores = false;
  const placements: Placement[] = [];
  for (const item of blocks) {
    if (item.alwaysStore) {
      stores = true;
      placements.push({ type: 'stored', item, spilled: false });
    } else if (item.bytes <= remainingBytes) {
      remainingBytes -= item.bytes;
      placements.push({ type: 'inline', block: item.block });
    } else {
      stores = spilled = true;
      placements.push({ type: 'stored', item, spilled: true });
    }
  }
  if (!stores) return { placements, spilled, inline: placements.map((placement) => (placement as { block: ContentBlock }).block), budgetBytes };
  for (const [index, placement] of placements.entries()) {
    if (remainingBytes <= 0) break;
    if (placement.type !== 'stored' || !placement.spilled || placement.item.previewText === undefined) continue;
    const preview = cutUtf8(placement.item.previewText, remainingBytes);
    if (preview === '') continue;
    remainingBytes -= Buffer.byteLength(preview, 'utf8');
    placements[index] = { ...placement, preview };
  }
  return { placements, spilled, budgetBytes };
}

/** The content of a fit: spilled and always-stored blocks stored, in order, and linked in their place. */
export async function storeSpills(fit: BudgetFit, artifacts: ArtifactSink): Promise<ContentBlock[]> {
  if (fit.inline) return [...fit.inline];
  const content: ContentBlock[] = [];
  for (const placement of fit.placements) {
    if (placement.type === 'inline') {
      content.push(placement.block);
      continue;
    }
    const { item, preview } = placement;
    if (preview !== undefined) content.push({ type: 'text', text: preview });
    const stored = await artifacts.put(item.body(), item.mimeType);
    const description =
      item.alwaysStore?.description ??
      `${item.what} (${item.bytes} bytes) is larger than the inline budget of ${fit.budgetBytes} bytes; it is stored whole here${preview !== undefined ? ', and the text above is its beginning' : ''}.`;
    content.push({ type: 'resource_link', uri: stored.uri, name: item.name, mimeType: item.mimeType, size: stored.size, description });
  }
  return content;
}

/** The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes`, never splitting a character. */
export function cutUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.byteLength <= maxBytes) return text;
  let end = Math.max(0, maxBytes);
  // Step back over continuation bytes (10xxxxxx) to the start of the character that does not fit.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

/** The bytes of `text` as UTF-8, as a Uint8Array over the same memory. */
export function utf8Bytes(text: string): Uint8Array {
  return Buffer.from(text, 'utf8');
}
