import { describe, expect, it } from 'vitest';
import { ParseError, type FormatTool } from '../../../src/formats/declaration.js';
import { detectFormat, parseCall } from '../../../src/formats/parse.js';
import { formatCall, renderSignature, renderTools } from '../../../src/formats/render.js';

const search: FormatTool = {
  name: 'search',
  description: 'Search text.\nAcross files.',
  inputSchema: {
    type: 'object',
    required: ['query'],
    properties: {
      query: { type: 'string', description: 'what to find' },
      limit: { type: 'integer' },
      exact: { type: 'boolean' },
      tags: { type: 'array', items: { type: 'string' } },
      sizes: { type: 'array', items: { type: 'number' } },
      range: { type: 'object', properties: { from: { type: 'integer' }, to: { type: 'integer' } } },
      mode: { enum: ['fast', 'slow'] },
      either: { type: ['integer', 'string'] },
    },
  },
};
const tools = [search, { name: 'ping', description: 'Ping.', inputSchema: { type: 'object', properties: {} } }];

function refusal(text: string, format?: 'json' | 'xml' | 'ptype'): string {
  try {
    parseCall(text, tools, format);
  } catch (error) {
    expect(error).toBeInstanceOf(ParseError);
    return (error as ParseError).reason;
  }
  throw new Error(`accepted: ${text}`);
}

describe('render', () => {
  it('renders a p-type signature with required parameters first', () => {
    expect(renderSignature(search)).toBe(
      'search(query: string, limit?: integer, exact?: boolean, tags?: string[], sizes?: number[], range?: {from?: integer, to?: integer}, mode?: "fast" | "slow", either?: integer | string)  # Search text. Across files.',
    );
  });
  it('renders JSON function declarations carrying the input schema', () => {
    const rendered = JSON.parse(renderTools(tools, 'json')) as Array<{ function: { name: string; parameters: unknown } }>;
    expect(rendered.map((entry) => entry.function.name)).toEqual(['search', 'ping']);
    expect(rendered[0]?.function.parameters).toEqual(search.inputSchema);
  });
  it('renders XML declarations with escaped text and a usage line', () => {
    const xml = renderTools([{ ...search, description: 'a <b> & c' }], 'xml');
    expect(xml).toContain('<description>a &lt;b&gt; &amp; c</description>');
    expect(xml).toContain('<parameter name="query" type="string" required="true">what to find</parameter>');
    expect(xml).toContain('&lt;search&gt;&lt;query&gt;');
  });
});

describe('parse: round trips', () => {
  const args = { query: 'a <b> & "c"', limit: 5, exact: false, tags: ['x', 'y'], sizes: [1.5], range: { from: 1, to: 2 }, mode: 'fast' };
  for (const format of ['json', 'xml', 'ptype'] as const) {
    it(`reads back a ${format} call`, () => {
      const text = formatCall(search, args, format);
      expect(detectFormat(text)).toBe(format);
      expect(parseCall(text, tools)).toEqual({ name: 'search', arguments: args });
    });
  }
});

describe('parse: XML coercion', () => {
  it('coerces numbers, booleans, arrays by repetition and nested objects', () => {
    const call = parseCall('<search><query>7</query><limit> 3 </limit><exact>true</exact><tags>a</tags><tags>b</tags><range><from>1</from></range></search>', tools);
    expect(call.arguments).toEqual({ query: '7', limit: 3, exact: true, tags: ['a', 'b'], range: { from: 1 } });
  });
  it('accepts CDATA and entities', () => {
    expect(parseCall('<search><query><![CDATA[<x>]]>&amp;&#65;</query></search>', tools).arguments).toEqual({ query: '<x>&A' });
  });
  it('refuses ambiguity between integer and string', () => {
    expect(refusal('<search><query>q</query><either>5</either></search>')).toMatch(/ambiguous/);
  });
  it('refuses an unclosed tag, a mismatched close, extra text and attributes', () => {
    expect(refusal('<search><query>q</query>')).toMatch(/unclosed tag <search>/);
    expect(refusal('<search><query>q</limit></search>')).toMatch(/closed by/);
    expect(refusal('Sure! <search><query>q</query></search>')).toMatch(/no call found|outside the call/);
    expect(refusal('<search><query>q</query></search> done')).toMatch(/after the call/);
    expect(refusal('<search><query a="1">q</query></search>')).toMatch(/attributes/);
    expect(refusal('<search><query>q</query></search><ping/>')).toMatch(/exactly one call/);
  });
  it('refuses a non-number for an integer, a repeated scalar and mixed content', () => {
    expect(refusal('<search><query>q</query><limit>many</limit></search>')).toMatch(/not integer/);
    expect(refusal('<search><query>q</query><query>r</query></search>')).toMatch(/not an array/);
    expect(refusal('<search><query>q</query><range>x<from>1</from></range></search>')).toMatch(/mixes text/);
    expect(refusal('<search><query>&#x110000;</query></search>')).toMatch(/invalid character reference/);
  });
  it('refuses an unknown tool, naming the available ones', () => {
    expect(refusal('<rm><path>/</path></rm>')).toMatch(/unknown tool "rm"; available: search, ping/);
  });
});

describe('parse: p-type and JSON', () => {
  it('maps positional arguments in signature order and keyword arguments by name', () => {
    expect(parseCall(`search('it''s', 2)`.replace("''", "\\'"), tools).arguments).toEqual({ query: "it's", limit: 2 });
    expect(parseCall('search(query="x", tags=["a", "b,c"])', tools).arguments).toEqual({ query: 'x', tags: ['a', 'b,c'] });
  });
  it('refuses wrong arity, positional after keyword, duplicates, bare words and trailing text', () => {
    expect(refusal('ping(1)')).toMatch(/at most 0 arguments/);
    expect(refusal('search(query="x", 5)')).toMatch(/positional argument after a keyword/);
    expect(refusal('search(query="x", query="y")')).toMatch(/given twice/);
    expect(refusal('search(hello)')).toMatch(/not a literal/);
    expect(refusal('search("x") and more')).toMatch(/nothing after it/);
    expect(refusal('search("x", [1, 2)')).toMatch(/unbalanced|not a literal/);
  });
  it('accepts the function-call envelope and string-encoded arguments', () => {
    expect(parseCall('{"type":"function","function":{"name":"search","arguments":"{\\"query\\":\\"q\\"}"}}', tools, 'json')).toEqual({
      name: 'search',
      arguments: { query: 'q' },
    });
  });
  it('refuses extra text, extra keys and non-object arguments', () => {
    expect(refusal('{"name":"search","arguments":{}} thanks', 'json')).toMatch(/not one JSON value/);
    expect(refusal('{"name":"search","arguments":{},"id":1}', 'json')).toMatch(/unexpected key "id"/);
    expect(refusal('{"name":"search","arguments":[1]}', 'json')).toMatch(/must be an object/);
    expect(refusal('hello there')).toMatch(/no call found/);
  });
});

describe('render: terminal tools (SPEC 5.2)', () => {
  const finish = {
    name: 'finish',
    description: 'Report and end.',
    inputSchema: { type: 'object', properties: { summary: { type: 'string' } }, required: ['summary'] },
    terminal: true,
  };
  const plain = { name: 'ping', description: 'Ping.', inputSchema: { type: 'object' } };

  it('marks a terminal tool in json, xml and ptype, and leaves other tools unmarked', () => {
    const json = JSON.parse(renderTools([finish, plain], 'json')) as Array<Record<string, unknown>>;
    expect(json.map((entry) => entry['terminal'])).toEqual([true, undefined]);
    expect(renderTools([finish, plain], 'xml')).toContain('<tool name="finish" terminal="true">');
    expect(renderTools([plain], 'xml')).not.toContain('terminal');
    expect(renderSignature(finish)).toMatch(/^finish\(summary: string\) -> terminal  # Report and end\. \(Terminal: /);
    expect(renderSignature(plain)).toBe('ping()  # Ping.');
  });

  it('a call to a terminal tool still round-trips in every format', () => {
    for (const format of ['json', 'xml', 'ptype'] as const)
      expect(parseCall(formatCall(finish, { summary: 'done' }, format), [finish])).toEqual({ name: 'finish', arguments: { summary: 'done' } });
  });
});
