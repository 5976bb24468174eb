import { describe, expect, it } from 'vitest';
import { xmlToModel } from '../../src/directives/models/xml-to-model.js';

const convert = (xml: string) => {
  const result = xmlToModel(xml, 64);
  if (!result.ok) throw new Error(result.message);
  return result.value;
};
const refusal = (xml: string, depth = 64) => {
  const result = xmlToModel(xml, depth);
  return result.ok ? null : result.message;
};

describe('xmlToModel (XmlToModel)', () => {
  it('has the original shape: root dropped, @attributes, lists for repeats, {} for empty elements', () => {
    const xml = `<?xml version="1.0"?>
      <order id="7">
        <item sku="a1">Pen</item>
        <item sku="b2"/>
        <note></note>
        <customer><name>Ann</name><age>42</age></customer>
      </order>`;
    expect(convert(xml)).toEqual({
      '@attributes': { id: '7' },
      item: [{ '@attributes': { sku: 'a1' }, '#text': 'Pen' }, { '@attributes': { sku: 'b2' } }],
      note: {},
      customer: { name: 'Ann', age: '42' },
    });
    expect(convert('<r/>')).toEqual({});
    expect(convert('<r>  just text </r>')).toBe('just text');
    expect(convert('<r><a>1</a><a>2</a><a>3</a></r>')).toEqual({ a: ['1', '2', '3'] });
  });

  it('decodes the predefined entities and character references, CDATA as written, and expands nothing else', () => {
    expect(
      convert('<r><a t="&quot;x&quot;">fish &amp; chips &#233;&#xE9; &lt;b&gt;</a><c><![CDATA[&amp; <raw>]]></c></r>'),
    ).toEqual({
      a: { '@attributes': { t: '"x"' }, '#text': 'fish & chips éé <b>' },
      c: '&amp; <raw>',
    });
    const bomb = `<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><r><x>&b;</x></r>`;
    expect(convert(bomb)).toEqual({ x: '&b;' });
    expect(refusal('<!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><r>&xxe;</r>')).toMatch(
      /External entities are not supported/,
    );
  });

  it('keeps names that are special in JavaScript as plain keys', () => {
    const value = convert(
      '<r><constructor>c</constructor><__proto__ polluted="yes">p</__proto__><toString>t</toString></r>',
    ) as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['constructor', '__proto__', 'toString']);
    expect(value.constructor).toBe('c');
    expect(JSON.parse(JSON.stringify(value))).toHaveProperty(['toString'], 't');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses malformed XML with the parser message and position', () => {
    expect(refusal('<a><b></a>')).toBe(
      "Expected closing tag 'b' (opened in line 1, col 4) instead of closing tag 'a'. (line 1, column 7)",
    );
    expect(refusal('')).toMatch(/Start tag expected/);
    expect(refusal('not xml')).toMatch(/char 'n' is not expected/);
    expect(refusal('<a/><b/>')).toBe('there are 2 root elements, XML has one');
    expect(refusal('<a>'.repeat(10) + '</a>'.repeat(10), 5)).toMatch(/nested/i);
  });
});
