/** A transaction-scoped advisory lock: catalog writes (apply, CRUD, key rotation) run one at a time. */
export const CATALOG_LOCK_ID = 0x7061726c;
