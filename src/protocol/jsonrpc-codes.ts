// The JSON-RPC 2.0 error codes the host answers with (JSON-RPC 2.0 section 5.1).
// A leaf module: serve's early front answers with them before the SDK loads.

export const JSONRPC_PARSE_ERROR = -32700;
export const JSONRPC_INVALID_REQUEST = -32600;
export const JSONRPC_INVALID_PARAMS = -32602;
export const JSONRPC_INTERNAL_ERROR = -32603;
