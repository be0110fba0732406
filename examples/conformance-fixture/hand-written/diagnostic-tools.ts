/**
 * Two tools of the conformance fixture declared by hand, in the generator's shape, because what
 * the scenarios check is beyond what `mcp-taskgen` derives from TypeScript types:
 * - `json_schema_2020_12_tool` (`json-schema-2020-12`): an input schema written in JSON Schema
 *   2020-12 with `$schema`, `$anchor`, `allOf`/`anyOf` and `if`/`then`/`else`, which no
 *   TypeScript type expresses; its zod twin enforces the same rules, so what is listed is what is
 *   checked (test/unit/hand-written-schema.test.ts compares the two).
 * - `test_missing_capability` (`server-stateless`): a tool that needs the client's `sampling`
 *   capability (`requiresClientCapabilities`, which the generator does not emit).
 *
 * This folder is outside the fixture's generator project (its tsconfig includes `src` and the
 * top-level files), so `mcp-taskgen` does not list these methods a second time.
 */
import { Tool } from 'mcp-task-server';
import { defineTaskManifest, defineTaskTool, type JsonSchema } from 'mcp-task-server/manifest';
import { z } from 'zod';

/** Someone to contact: by phone or by e-mail, as `contactMethod` says. */
export interface Contact {
  name?: string;
  address?: { street?: string; city?: string };
  contactMethod?: 'phone' | 'email';
  phone?: string;
  email?: string;
}

export class HandWrittenTools {
  /** Says how the contact will be reached. */
  @Tool()
  async jsonSchema2020_12Tool(contact: Contact): Promise<string> {
    const how = contact.contactMethod === 'phone' ? `by phone at ${contact.phone}` : `by e-mail at ${contact.email}`;
    const where = contact.address?.city ? ` in ${contact.address.city}` : '';
    return `${contact.name ?? 'The contact'}${where} will be reached ${how}`;
  }

  /**
   * Needs the client's `sampling` capability; a client that did not declare it is refused
   * before this runs. The framework asks nothing of the client here: the tool exists to show
   * that refusal.
   */
  @Tool()
  async testMissingCapability(): Promise<string> {
    return 'The client declared sampling';
  }
}

/** The input schema the `json-schema-2020-12` scenario expects, as written (not generated). */
export const CONTACT_INPUT_SCHEMA: JsonSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  // biome-ignore lint/suspicious/noThenProperty: a JSON Schema keyword; not a function, so never a thenable.
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
};

/** `CONTACT_INPUT_SCHEMA` in zod: unknown keys refused, and the same two cross-field rules. */
export const ContactInput = z
  .strictObject({
    name: z.string().optional(),
    // The `$defs` entry leaves other keys open; zod drops them, as for generated input schemas.
    address: z.object({ street: z.string().optional(), city: z.string().optional() }).optional(),
    contactMethod: z.enum(['phone', 'email']).optional(),
    phone: z.string().optional(),
    email: z.string().optional(),
  })
  .superRefine((contact, ctx) => {
    if (contact.phone === undefined && contact.email === undefined) {
      ctx.addIssue({ code: 'custom', message: 'give a phone or an email', path: [] });
    }
    // if contactMethod is 'phone' then phone is required, else email is.
    if (contact.contactMethod === 'phone' && contact.phone === undefined) {
      ctx.addIssue({ code: 'custom', message: "required when contactMethod is 'phone'", path: ['phone'] });
    }
    if (contact.contactMethod !== 'phone' && contact.email === undefined) {
      ctx.addIssue({ code: 'custom', message: "required unless contactMethod is 'phone'", path: ['email'] });
    }
  });

const NoInput = z.object({});

export const handWrittenManifest = defineTaskManifest({
  formatVersion: 1,
  tools: [
    defineTaskTool<HandWrittenTools, z.output<typeof ContactInput>>({
      name: 'json_schema_2020_12_tool',
      description: 'Tool with JSON Schema 2020-12 features: says how a contact will be reached.',
      taskSupport: 'forbidden',
      inputSchema: CONTACT_INPUT_SCHEMA,
      input: ContactInput,
      result: 'text',
      target: { class: HandWrittenTools, method: 'jsonSchema2020_12Tool' },
      source: 'hand-written/diagnostic-tools.ts:29:9',
      invoke: (target, args) => target.jsonSchema2020_12Tool(args),
    }),
    defineTaskTool<HandWrittenTools, z.output<typeof NoInput>>({
      name: 'test_missing_capability',
      description: "Needs the client's sampling capability; without it the call is refused with -32021.",
      taskSupport: 'forbidden',
      requiresClientCapabilities: ['sampling'],
      inputSchema: { type: 'object', properties: {} },
      input: NoInput,
      result: 'text',
      target: { class: HandWrittenTools, method: 'testMissingCapability' },
      source: 'hand-written/diagnostic-tools.ts:41:9',
      invoke: (target) => target.testMissingCapability(),
    }),
  ],
});
