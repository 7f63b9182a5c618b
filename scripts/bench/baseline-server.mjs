// The baseline: the same trivial tool served by a plain MCP SDK server over
// stdio, with no sandbox, no policy and no journal. Every ratio in the bench
// is measured against this process in the same run.
import { McpServer, fromJsonSchema } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

const server = new McpServer({ name: 'baseline', version: '1.0.0' });
server.registerTool(
  'echo',
  {
    description: 'Echo the text back.',
    inputSchema: fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }),
  },
  async (args) => ({ content: [{ type: 'text', text: JSON.stringify({ text: args.text }) }], structuredContent: { text: args.text } }),
);
await server.connect(new StdioServerTransport());
