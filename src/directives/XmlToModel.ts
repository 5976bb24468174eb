import { Errors } from '../shared/errors.js';
import { XML_MAX_BYTES, xmlToModel } from './models/xml-to-model.js';
import { defineDirective } from '../engine/directive-types.js';

export default defineDirective({
  name: 'XmlToModel',
  summary:
    'Converts the XML text `source` into maps in memory `target` (root dropped, @attributes, lists for repeats); malformed XML is a 400.',
  example: { source: '$.message.body', target: 'order' },
  memory: { writes: ['<target>'] },
  failures: [
    { error: Errors.xmlMalformed, when: 'when the XML is malformed' },
    { error: Errors.xmlTooLarge, when: 'when the XML is larger than 1 MiB' },
  ],
  params: {
    type: 'object',
    properties: { source: { type: 'string' }, target: { type: 'string', minLength: 1 } },
    required: ['source', 'target'],
    additionalProperties: false,
  },
  run(ctx, { source, target }) {
    const bytes = Buffer.byteLength(source, 'utf8');
    if (bytes > XML_MAX_BYTES) throw Errors.xmlTooLarge(bytes, XML_MAX_BYTES);
    const result = xmlToModel(source, ctx.api.maxJsonDepth);
    if (!result.ok) throw Errors.xmlMalformed(result.message);
    ctx.memory.set(target, result.value);
  },
});
