/** What the KeyStore implementations share: listing order, invalidation listeners, record copies. */
import type { AccountRecord, ApiKeyRecord } from './types.js';

/** Lists come oldest first; the id breaks ties so that every store lists in the same order. */
export function byCreation<T extends AccountRecord | ApiKeyRecord>(records: T[]): T[] {
  return records.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
}

/** A copy of a record held in memory, so that a caller changing it cannot change the store. */
export function copyOrNull<T>(record: T | undefined): T | null {
  return record === undefined ? null : structuredClone(record);
}

export class InvalidationListeners {
  private readonly listeners: Array<(keyId: string) => void> = [];

  add(listener: (keyId: string) => void): void {
    this.listeners.push(listener);
  }

  notify(keyId: string): void {
    for (const listener of this.listeners) listener(keyId);
  }
}
