import { randomUUID } from 'node:crypto';
import type { LlmToolCall } from './llm.port';

/** A `tool_calls` delta as servers really send it: any field may be missing. */
export interface ToolCallDelta {
  index?: number | null;
  id?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
}

interface Slot {
  id: string | null;
  name: string;
  args: string;
}

const isCompleteJson = (text: string): boolean => {
  // Arguments are JSON objects; the cheap check keeps long streamed arguments from being parsed at every fragment.
  if (!/[}\]]\s*$/.test(text)) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/**
 * Builds whole tool calls from streamed deltas, whatever the server's habit: deltas keyed by
 * `index`, deltas with no `index` (continuing the latest call), several calls all at index 0
 * told apart by a new id, whole calls in one chunk, and a trailing empty or repeated
 * arguments delta (dropped once a call's arguments are complete JSON). Malformed arguments
 * pass through raw: the caller validates them.
 */
export class ToolCallAssembler {
  private readonly slots: Slot[] = [];
  private readonly byIndex = new Map<number, Slot>();
  private readonly byId = new Map<string, Slot>();

  push(deltas: readonly ToolCallDelta[] | null | undefined): void {
    for (const delta of deltas ?? []) this.pushOne(delta);
  }

  get size(): number {
    return this.slots.filter((s) => s.name).length;
  }

  /** The calls in the order they started; each exactly once. Calls that never got a name are dropped. */
  calls(): LlmToolCall[] {
    return this.slots
      .filter((s) => s.name)
      .map((s) => ({ id: s.id ?? `call_${randomUUID().replace(/-/g, '')}`, name: s.name, arguments: s.args }));
  }

  private pushOne(delta: ToolCallDelta): void {
    const slot = this.target(delta);
    if (delta.id && !slot.id) {
      slot.id = delta.id;
      this.byId.set(delta.id, slot);
    }
    const name = delta.function?.name;
    if (name && !slot.name) slot.name = name;
    const fragment = delta.function?.arguments ?? '';
    if (fragment && !this.isRepeat(slot, fragment)) slot.args += fragment;
  }

  private target(delta: ToolCallDelta): Slot {
    const id = delta.id || null;
    const index = typeof delta.index === 'number' ? delta.index : null;
    const known = id ? this.byId.get(id) : undefined;
    if (known) return known;
    const current = index === null ? this.slots[this.slots.length - 1] : this.byIndex.get(index);
    if (current && !this.startsNewCall(current, delta, id)) return current;
    const slot: Slot = { id: null, name: '', args: '' };
    this.slots.push(slot);
    if (index !== null) this.byIndex.set(index, slot);
    return slot;
  }

  /** A delta opens a new call when it brings another id, or a name once the current call is whole. */
  private startsNewCall(current: Slot, delta: ToolCallDelta, id: string | null): boolean {
    if (id && current.id && current.id !== id) return true;
    const name = delta.function?.name;
    if (!name || !current.name) return false;
    return name !== current.name || isCompleteJson(current.args);
  }

  private isRepeat(slot: Slot, fragment: string): boolean {
    if (!isCompleteJson(slot.args)) return false;
    return fragment.trim() === '' || slot.args.endsWith(fragment);
  }
}
