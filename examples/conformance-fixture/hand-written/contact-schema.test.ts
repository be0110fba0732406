/**
 * The hand-written 2020-12 input schema of `json_schema_2020_12_tool` and its zod twin accept
 * and refuse the same arguments: what is listed is what is checked.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { CONTACT_INPUT_SCHEMA, ContactInput } from './diagnostic-tools.js';

// Not strict: this Ajv does not know `$anchor` (an identifier, with no say in validation), and
// the `anyOf` branches require properties declared at the top, as the scenario's schema does.
const validate = new Ajv2020({ strict: false }).compile(CONTACT_INPUT_SCHEMA);

const CASES: [string, Record<string, unknown>][] = [
  ['an e-mail alone', { email: 'a@example.com' }],
  ['a phone alone (no method: e-mail is then required)', { phone: '1' }],
  ['by phone, with a phone', { contactMethod: 'phone', phone: '1' }],
  ['by phone, with only an e-mail', { contactMethod: 'phone', email: 'a@example.com' }],
  ['by e-mail, with only a phone', { contactMethod: 'email', phone: '1' }],
  ['by e-mail, with both', { contactMethod: 'email', phone: '1', email: 'a@example.com' }],
  ['nothing at all', {}],
  ['a name and an address only', { name: 'Ada', address: { city: 'London' } }],
  ['an unknown key', { email: 'a@example.com', fax: '1' }],
  ['an unknown method', { contactMethod: 'post', email: 'a@example.com' }],
  ['a wrongly typed address', { email: 'a@example.com', address: { city: 3 } }],
  [
    'a full contact',
    { name: 'Ada', address: { street: '1 Road', city: 'London' }, contactMethod: 'email', email: 'a@example.com' },
  ],
];

describe('json_schema_2020_12_tool: listed schema and enforced schema agree', () => {
  for (const [label, args] of CASES) {
    it(label, () => {
      expect(ContactInput.safeParse(args).success).toBe(validate(args));
    });
  }

  it('the cases cover both verdicts', () => {
    const verdicts = new Set(CASES.map(([, args]) => validate(args)));
    expect(verdicts).toEqual(new Set([true, false]));
  });
});
