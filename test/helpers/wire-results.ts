// Reading tools/call results as they arrive over the wire (plain JSON, as any
// MCP client sees them): the text of the blocks, or the error after checking
// the shape SPEC section 5 gives every error result.

/** The text of every block, one per line (a block without text counts as empty). */
export function wireTextOf(result: Record<string, unknown>): string {
  return (result['content'] as Array<{ type: string; text?: string }>).map((block) => block.text ?? '').join('\n');
}

/** The code and details of an error result, after checking its shape. */
export function wireErrorOf(result: Record<string, unknown>): Record<string, unknown> & { code: string } {
  if (result['isError'] !== true) throw new Error(`not an error result: ${JSON.stringify(result).slice(0, 500)}`);
  if ('structuredContent' in result && result['structuredContent'] !== undefined) throw new Error('an error result carries structuredContent');
  const content = result['content'] as Array<{ type: string; text?: string }>;
  const meta = (result['_meta'] as Record<string, unknown> | undefined)?.['toolhost/error'] as (Record<string, unknown> & { code: string }) | undefined;
  if (!meta) throw new Error('no _meta["toolhost/error"]');
  if (content[0]?.type !== 'text' || !content[0].text?.startsWith(`code: ${meta.code}`)) throw new Error(`first block does not start with "code: ${meta.code}"`);
  return meta;
}
