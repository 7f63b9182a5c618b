// resources/read for artifacts: a result too large to return inline is stored
// by the supervisor and read back whole here (SPEC section 5 step 9).
import { ResourceNotFoundError, type ReadResourceResult } from '@modelcontextprotocol/server';
import type { Supervisor } from '../supervisor/types.js';
import { isTextMimeType } from '../supervisor/text-mime.js';

export const ARTIFACT_URI_TEMPLATE = 'toolhost://artifacts/{sha256}';

/** The artifact's bytes as one resource content: text when its MIME type is textual and it is UTF-8, else base64. */
export async function readArtifactResource(supervisor: Pick<Supervisor, 'readArtifact'>, uri: string): Promise<ReadResourceResult> {
  const artifact = await supervisor.readArtifact(uri);
  if (!artifact) throw new ResourceNotFoundError(uri);
  const text = isTextMimeType(artifact.mimeType) ? decodeUtf8(artifact.bytes) : undefined;
  return {
    contents: [text !== undefined ? { uri, mimeType: artifact.mimeType, text } : { uri, mimeType: artifact.mimeType, blob: Buffer.from(artifact.bytes).toString('base64') }],
  };
}

function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
