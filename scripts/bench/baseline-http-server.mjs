// The HTTP baseline: the same trivial tool served by a plain MCP SDK v2 server
// over Streamable HTTP (createMcpHandler + toNodeHandler), with no
// authentication, sandbox, policy or journal. Prints its URL on stdout.
import { createServer } from 'node:http';
import { McpServer, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';

function build() {
  const server = new McpServer({ name: 'baseline-http', version: '1.0.0' });
  server.registerTool(
    'echo',
    {
      description: 'Echo the text back.',
      inputSchema: fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }),
    },
    async (args) => ({ content: [{ type: 'text', text: JSON.stringify({ text: args.text }) }], structuredContent: { text: args.text } }),
  );
  return server;
}

const handle = toNodeHandler(createMcpHandler(() => build()));
const http = createServer((req, res) => void handle(req, res));
http.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${http.address().port}/mcp\n`));
process.on('SIGTERM', () => http.close(() => process.exit(0)));
