/**
 * client: commands and queries on its own conversations; auditor: reads every stream, verifies,
 * exports, never commands; admin: catalog, keys, kill/pause, everything.
 */
export const ROLES = ['client', 'auditor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** Who is calling: the subject owns the conversations it starts. */
export interface Principal {
  subject: string;
  roles: Role[];
  /** The API key's id when the caller used one ('bootstrap' for PARLEY_ADMIN_API_KEY). */
  keyId?: string;
}

export const isRole = (value: unknown): value is Role => ROLES.includes(value as Role);

export const hasRole = (principal: Principal, role: Role): boolean => principal.roles.includes(role);

/** The principal of every request when PARLEY_AUTH_ENABLED=false (development only). */
export const DEV_PRINCIPAL: Principal = Object.freeze({ subject: 'dev', roles: ['admin'] as Role[], keyId: 'dev' });
