// Renders tool declarations for models without native tool calls (SPEC
// section 9), and the call text a model is expected to emit in each format.
import { asRecord } from '../config/guards.js';
import { describedAs, parametersOf, typesOf, type FormatName, type FormatTool } from './declaration.js';
import { escapeXml } from './xml.js';

/** All declarations in one format, ready to put in a prompt. */
export function renderTools(tools: readonly FormatTool[], format: FormatName): string {
  switch (format) {
    case 'json':
      return JSON.stringify(
        tools.map((tool) => ({
          type: 'function',
          function: { name: tool.name, description: describedAs(tool), parameters: tool.inputSchema },
          ...(tool.terminal ? { terminal: true } : {}),
        })),
        null,
        2,
      );
    case 'xml':
      return `<tools>\n${tools.map(renderXmlTool).join('\n')}\n</tools>`;
    case 'ptype':
      return tools.map(renderSignature).join('\n');
  }
}

/** The text a model emits to call `tool` with `args` in `format`; parseCall reads it back. */
export function formatCall(tool: FormatTool, args: Readonly<Record<string, unknown>>, format: FormatName): string {
  switch (format) {
    case 'json':
      return JSON.stringify({ name: tool.name, arguments: args });
    case 'xml':
      return `<${tool.name}>${Object.entries(args)
        .map(([key, value]) => xmlElement(key, value))
        .join('')}</${tool.name}>`;
    case 'ptype':
      return `${tool.name}(${Object.entries(args)
        .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
        .join(', ')})`;
  }
}

/** `search(query: string, limit?: integer)  # description` */
export function renderSignature(tool: FormatTool): string {
  const params = parametersOf(tool).map((p) => `${p.name}${p.required ? '' : '?'}: ${ptypeOf(p.schema)}`);
  return `${tool.name}(${params.join(', ')})${tool.terminal ? ' -> terminal' : ''}  # ${oneLine(describedAs(tool))}`;
}

function renderXmlTool(tool: FormatTool): string {
  const params = parametersOf(tool).map((p) => {
    const description = typeof p.schema['description'] === 'string' ? escapeXml(p.schema['description']) : '';
    return `      <parameter name="${p.name}" type="${escapeXml(ptypeOf(p.schema))}" required="${p.required}">${description}</parameter>`;
  });
  const example = `<${tool.name}>${parametersOf(tool)
    .filter((p) => p.required)
    .map((p) => `<${p.name}>…</${p.name}>`)
    .join('')}</${tool.name}>`;
  return [
    `  <tool name="${tool.name}"${tool.terminal ? ' terminal="true"' : ''}>`,
    `    <description>${escapeXml(oneLine(describedAs(tool)))}</description>`,
    `    <parameters>`,
    ...params,
    `    </parameters>`,
    `    <usage>${escapeXml(example)}</usage>`,
    `  </tool>`,
  ].join('\n');
}

function xmlElement(name: string, value: unknown): string {
  if (Array.isArray(value)) return `<${name}>${value.map((item) => xmlElement('item', item)).join('')}</${name}>`;
  if (value !== null && typeof value === 'object') {
    return `<${name}>${Object.entries(value)
      .map(([key, inner]) => xmlElement(key, inner))
      .join('')}</${name}>`;
  }
  if (value === null) return `<${name}/>`;
  return `<${name}>${escapeXml(String(value))}</${name}>`;
}

function ptypeOf(schema: Readonly<Record<string, unknown>>): string {
  if (Array.isArray(schema['enum'])) return schema['enum'].map((value) => JSON.stringify(value)).join(' | ');
  const types = typesOf(schema);
  if (types.length === 0) return 'any';
  return types
    .map((type) => {
      if (type === 'array') return `${ptypeOf(asRecord(schema['items']))}[]`;
      if (type === 'object') {
        const properties = Object.entries(asRecord(schema['properties']));
        if (properties.length === 0) return 'object';
        const required = new Set(Array.isArray(schema['required']) ? schema['required'].map(String) : []);
        return `{${properties.map(([key, inner]) => `${key}${required.has(key) ? '' : '?'}: ${ptypeOf(asRecord(inner))}`).join(', ')}}`;
      }
      return type;
    })
    .join(' | ');
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
