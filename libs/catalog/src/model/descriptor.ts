import type { Field } from './fields';

/**
 * A list on a parent entity stored in a link table (an action's skills, a model's
 * capabilities…). Its first column is the member: unique within the list.
 */
export interface LinkSpec {
  /** The field on the parent: `skills`. */
  field: string;
  table: string;
  /** Column (and property) naming the parent's key. */
  parent: string;
  columns: Record<string, Field>;
  /** A plain string in the bundle stands for `{ [member]: value }` with the other columns defaulted. */
  shorthand: boolean;
  /** The API shows a plain list of members (the link has no other column). */
  scalar: boolean;
}

/** Where an entity's write-only values live; see secrets/secret-specs.ts. */
export type SecretKind = 'provider' | 'tool' | 'mcpClient';

export interface EntityDescriptor {
  /** The bundle's list name (plural camelCase): `mcpClients`. */
  kind: string;
  /** The HTTP collection (plural kebab-case): `mcp-clients`. */
  route: string;
  /** The entity named in messages: `MCP client`. */
  label: string;
  table: string;
  key: { field: string; max: number };
  fields: Record<string, Field>;
  links: LinkSpec[];
  secrets?: SecretKind;
}

export const memberOf = (link: LinkSpec): string => Object.keys(link.columns)[0];
