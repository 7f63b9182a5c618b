// What toolhost says of itself at the opening of a connection: its capabilities,
// its instructions, and the legacy protocol revisions `initialize` negotiates.
// A leaf module: the SDK Server is built with these, and serve's early front
// answers `initialize` with them before the SDK has loaded (early-initialize.ts);
// a test holds the two answers equal.

/** The capabilities every server instance declares. */
export const SERVER_CAPABILITIES = { tools: { listChanged: true }, resources: {}, logging: {} } as const;

/** The instructions every server instance gives. */
export const SERVER_INSTRUCTIONS = 'toolhost runs sandboxed tools under policy. Errors carry a stable code in their first line and in _meta["toolhost/error"].';

/**
 * The revisions a legacy `initialize` may agree on, newest first: the SDK's
 * legacy list (its SUPPORTED_PROTOCOL_VERSIONS), which its Server negotiates
 * from: the client's version when listed, else the first.
 */
export const LEGACY_PROTOCOL_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'];
