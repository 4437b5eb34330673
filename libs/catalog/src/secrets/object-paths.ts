/** Dotted paths (`request.basic.password`) into plain JSON objects. */
type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export function getPath(target: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((at, key) => (isObject(at) ? at[key] : undefined), target);
}

/** Sets the value only where every parent object exists, so a secret never invents structure. */
export function setExisting(target: Json, path: string, value: unknown): void {
  const keys = path.split('.');
  const parent = getPath(target, keys.slice(0, -1).join('.'));
  if (keys.length === 1) target[keys[0]] = value;
  else if (isObject(parent)) parent[keys[keys.length - 1]] = value;
}

export function deletePath(target: Json, path: string): void {
  const keys = path.split('.');
  const parent = keys.length === 1 ? target : getPath(target, keys.slice(0, -1).join('.'));
  if (isObject(parent)) delete parent[keys[keys.length - 1]];
}
