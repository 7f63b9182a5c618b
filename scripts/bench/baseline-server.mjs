// The peer: the same trivial tool served by a plain MCP SDK server over stdio,
// with no sandbox, no policy and no journal. Every ratio in the bench is
// measured against this process in the same run, warmed up and interleaved
// with the host's rounds. `--sdk v1` serves it with the SDK v1 McpServer
// (@modelcontextprotocol/sdk), otherwise with the SDK v2 one.
const v1 = process.argv.includes('--sdk') && process.argv[process.argv.indexOf('--sdk') + 1] === 'v1';
const echo = async (args) => ({ content: [{ type: 'text', text: JSON.stringify({ text: args.text }) }], structuredContent: { text: args.text } });
const description = 'Echo the text back.';

if (v1) {
  const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const { z } = await import('zod');
  const server = new McpServer({ name: 'baseline-v1', version: '1.0.0' });
  server.registerTool('echo', { description, inputSchema: { text: z.string() } }, echo);
  await server.connect(new StdioServerTransport());
} else {
  const { McpServer, fromJsonSchema } = await import('@modelcontextprotocol/server');
  const { StdioServerTransport } = await import('@modelcontextprotocol/server/stdio');
  const server = new McpServer({ name: 'baseline', version: '1.0.0' });
  server.registerTool('echo', { description, inputSchema: fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }) }, echo);
  await server.connect(new StdioServerTransport());
}
