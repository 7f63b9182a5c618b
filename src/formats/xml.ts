// A strict reader for the XML subset models emit for calls:
// <tool><field>value</field></tool>. Elements, text, entities and CDATA only;
// no attributes, comments, processing instructions or DTDs (an emission that
// needs them is ambiguous and refused). Iterative, with a depth bound.
import { ParseError } from './declaration.js';

export interface XmlElement {
  readonly name: string;
  readonly children: XmlElement[];
  /** Concatenated text content (entities decoded); '' when there is none. */
  text: string;
  /** True when the element held child elements (whitespace text between them is ignored). */
  hasElements: boolean;
}

const MAX_DEPTH = 64;
const NAME = /^[A-Za-z_][A-Za-z0-9_.-]*/;
const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (ch) => `&${Object.keys(ENTITIES).find((key) => ENTITIES[key] === ch)};`);
}

/** Parses exactly one root element; anything but whitespace around it is refused. */
export function parseXml(input: string): XmlElement {
  const text = input.trim();
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('<![CDATA[', i)) {
      const end = text.indexOf(']]>', i);
      if (end < 0) throw new ParseError('unclosed CDATA section');
      appendText(stack, text.slice(i + 9, end), i);
      i = end + 3;
    } else if (text.startsWith('</', i)) {
      const match = NAME.exec(text.slice(i + 2));
      const close = text.indexOf('>', i);
      if (!match || close < 0 || text.slice(i + 2 + match[0].length, close).trim() !== '') throw new ParseError(`malformed closing tag at offset ${i}`);
      const open = stack.pop();
      if (!open) throw new ParseError(`closing tag </${match[0]}> without an opening tag`);
      if (open.name !== match[0]) throw new ParseError(`<${open.name}> is closed by </${match[0]}>`);
      i = close + 1;
      if (stack.length === 0) root = open;
    } else if (text[i] === '<') {
      if (root) throw new ParseError('text after the call: emit exactly one call');
      const rest = text.slice(i + 1);
      const match = NAME.exec(rest);
      if (!match) throw new ParseError(`unsupported markup at offset ${i} (comments, declarations and processing instructions are refused)`);
      const close = text.indexOf('>', i);
      if (close < 0) throw new ParseError(`unclosed tag <${match[0]}`);
      const inner = text.slice(i + 1 + match[0].length, close);
      const selfClosing = inner.trimEnd().endsWith('/');
      if ((selfClosing ? inner.trimEnd().slice(0, -1) : inner).trim() !== '') throw new ParseError(`attributes are not accepted on <${match[0]}>`);
      const element: XmlElement = { name: match[0], children: [], text: '', hasElements: false };
      const parent = stack[stack.length - 1];
      if (parent) {
        parent.children.push(element);
        parent.hasElements = true;
      }
      i = close + 1;
      if (selfClosing) {
        if (!parent) root = element;
      } else {
        stack.push(element);
        if (stack.length > MAX_DEPTH) throw new ParseError(`nesting deeper than ${MAX_DEPTH}`);
      }
    } else {
      const next = text.indexOf('<', i);
      const end = next < 0 ? text.length : next;
      appendText(stack, decodeEntities(text.slice(i, end)), i, root !== undefined);
      i = end;
    }
  }
  if (stack.length > 0) throw new ParseError(`unclosed tag <${stack[stack.length - 1]?.name}>`);
  if (!root) throw new ParseError('no call found: expected <tool_name>…</tool_name>');
  for (const element of walk(root)) {
    if (element.hasElements && element.text.trim() !== '') throw new ParseError(`<${element.name}> mixes text and elements`);
  }
  return root;
}

function appendText(stack: XmlElement[], value: string, offset: number, afterRoot = false): void {
  const top = stack[stack.length - 1];
  if (!top) {
    if (value.trim() !== '') throw new ParseError(afterRoot ? 'text after the call: emit exactly one call' : `text outside the call at offset ${offset}`);
    return;
  }
  top.text += value;
}

function decodeEntities(raw: string): string {
  return raw.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);?/g, (whole, body: string) => {
    if (!whole.endsWith(';')) throw new ParseError(`unterminated entity ${whole}`);
    if (body.startsWith('#')) {
      const codePoint = body.startsWith('#x') ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      if (codePoint > 0x10ffff || (codePoint >= 0xd800 && codePoint <= 0xdfff)) throw new ParseError(`invalid character reference ${whole}`);
      return String.fromCodePoint(codePoint);
    }
    const value = ENTITIES[body];
    if (value === undefined) throw new ParseError(`unknown entity &${body};`);
    return value;
  });
}

function* walk(root: XmlElement): Generator<XmlElement> {
  const pending = [root];
  while (pending.length > 0) {
    const element = pending.pop() as XmlElement;
    yield element;
    pending.push(...element.children);
  }
}
