// Launcher of the reference MCP filesystem server (an npm dependency of this
// package). A server manifest's command may only name files inside its own
// folder or a program on PATH; this file is that, and Node resolves the package
// from the node_modules folders above it, which the sandbox shows read-only.
// Arguments (the allowed directories) pass through unchanged.
await import('@modelcontextprotocol/server-filesystem/dist/index.js');
