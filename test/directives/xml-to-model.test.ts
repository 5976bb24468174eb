import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessApis } from '../helpers/in-process-apis.js';

// XmlToModel (ORIGINAL.md): XML text to maps in memory, in the original's shape; entities are not
// expanded; malformed XML is a 400 with the parser's message; more than 1 MiB of XML is a 413.

const API = `key: xml
endpoints:
  post /convert:
    Convert: { directive: XmlToModel, source: $.message.body, target: order }
    Reply: { directive: ModifyMessage, body: $.memory.order }
after:
  OnError: { directive: OnError, groups: [ERROR_FLOW] }
`;

let anvil: InProcessApis;

beforeAll(async () => {
  // No router here, so no body limit: the directive's own limits are what is checked.
  anvil = await startInProcess({ apis: { xml: { 'api.yaml': API } } });
});
afterAll(async () => anvil?.dispose());

const convert = (xml: string) =>
  anvil.request('/xml/convert', { method: 'POST', headers: { 'content-type': 'application/xml' }, body: xml });

describe('XmlToModel', () => {
  it('converts XML into the original shape', async () => {
    const reply = await convert(`<?xml version="1.0" encoding="UTF-8"?>
<order id="o-1" currency="EUR">
  <line sku="pen"><qty>2</qty><price>1.50</price></line>
  <line sku="ink"><qty>1</qty><price>4.00</price></line>
  <gift/>
  <note>Leave at the door &amp; ring</note>
</order>`);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json()).toEqual({
      '@attributes': { id: 'o-1', currency: 'EUR' },
      line: [
        { '@attributes': { sku: 'pen' }, qty: '2', price: '1.50' },
        { '@attributes': { sku: 'ink' }, qty: '1', price: '4.00' },
      ],
      gift: {},
      note: 'Leave at the door & ring',
    });
  });

  it('expands no entity: a billion-laughs document stays small, an external entity is refused', async () => {
    const laughs = `<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><lolz><x>&lol3;</x></lolz>`;
    const reply = await convert(laughs);
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ x: '&lol3;' });
    const xxe = await convert('<!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><r><x>&xxe;</x></r>');
    expect(xxe.status).toBe(400);
    expect(xxe.json().error).toMatch(/^XmlToModel: malformed XML: External entities are not supported/);
    expect(xxe.text).not.toContain('root:');
  });

  it('answers 400 with the parser message for malformed XML', async () => {
    const reply = await convert('<order><line></order>');
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({
      error:
        "XmlToModel: malformed XML: Expected closing tag 'line' (opened in line 1, col 8) instead of closing tag 'order'. (line 1, column 14)",
    });
    const empty = await anvil.request('/xml/convert', { method: 'POST' });
    expect(empty.status).toBe(400);
    expect(empty.json().error).toMatch(/^XmlToModel: malformed XML: Start tag expected/);
  });

  it('refuses XML nested deeper than the JSON depth limit, and more than 1 MiB of it', async () => {
    const deep = await convert(`<r>${'<a>'.repeat(80)}${'</a>'.repeat(80)}</r>`);
    expect(deep.status).toBe(400);
    expect(deep.json().error).toMatch(/^XmlToModel: malformed XML: .*nested/i);
    const large = `<r>${'<a>x</a>'.repeat(150_000)}</r>`;
    const reply = await convert(large);
    expect(reply.status).toBe(413);
    expect(reply.json()).toEqual({
      error: `XmlToModel: the XML is ${large.length} bytes, over the limit of 1048576 bytes`,
    });
  });
});
