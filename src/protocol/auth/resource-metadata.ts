// RFC 9728 protected-resource metadata: where a client learns which
// authorization server issues tokens for this MCP endpoint. Served at
// /.well-known/oauth-protected-resource and its /mcp-suffixed form (RFC 9728
// section 3.1), only when JWTs are accepted.

const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

interface ResourceMetadata {
  readonly resource: string;
  readonly authorization_servers: readonly string[];
  readonly bearer_methods_supported: readonly ['header'];
  readonly resource_name: string;
}

/** The metadata document for `resource` (the public URL of /mcp) issued by `issuer`. */
export function resourceMetadata(resource: string, issuer: string): ResourceMetadata {
  return { resource, authorization_servers: [issuer], bearer_methods_supported: ['header'], resource_name: 'toolhost' };
}

/** Whether `path` asks for the metadata document. */
export function isResourceMetadataPath(path: string): boolean {
  return path === RESOURCE_METADATA_PATH || path === `${RESOURCE_METADATA_PATH}/mcp`;
}
