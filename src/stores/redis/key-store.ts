/**
 * Accounts and keys in Redis, as JSON in two hashes plus a key-id set per account and an index of
 * the accounts mapped to each upstream customer (account-write.lua, which deletes an account too). Everything sits
 * under one hash tag, `{keys}`: the data is small (operators create it), it lets a key and its index
 * entry be written in one MULTI on a cluster, and lookups are cached by the key service anyway.
 * Invalidations travel over pub/sub on a connection of their own (a subscribed connection can do
 * nothing else).
 */
import { Cluster, type Redis } from 'ioredis';
import { byCreation, InvalidationListeners } from '../key-records.js';
import { UpstreamClaimedError, type AccountRecord, type ApiKeyRecord, type KeyStore } from '../types.js';
import type { RedisClient, RedisConnection } from './connection.js';
import { toStoreError } from './connection.js';
import { holdsFingerprint } from './fingerprint.js';
import { LuaScript } from './lua-script.js';

export class RedisKeyStore implements KeyStore {
  private readonly listeners = new InvalidationListeners();
  /** Connections of a Cluster's subscription already watched. */
  private readonly watched = new WeakSet<Redis>();
  private readonly lookupScript = LuaScript.load('key-lookup');
  private readonly replaceScript = LuaScript.load('key-replace', 'same-record');
  private readonly accountScript = LuaScript.load('account-write', 'same-record');
  private readonly accountsKey: string;
  private readonly keysKey: string;
  private readonly upstreamsKey: string;
  /** The ids of deleted accounts: never an account's again (account-write.lua). */
  private readonly retiredKey: string;

  constructor(
    private readonly redis: RedisConnection,
    private readonly subscriber: RedisClient,
    private readonly channel: string,
  ) {
    this.accountsKey = redis.key('{keys}:accounts');
    this.keysKey = redis.key('{keys}:keys');
    this.upstreamsKey = redis.key('{keys}:upstream-accounts');
    this.retiredKey = redis.key('{keys}:retired-accounts');
    subscriber.on('message', (from: string, keyId: string) => {
      if (from === channel) this.listeners.notify(keyId);
    });
    // Messages published while the subscription is down are lost: when it breaks, and again once
    // it is back (a copy read in between may predate a lost message), every copy is unconfirmed.
    // ioredis subscribes again by itself only after 'ready': back means a subscription of ours answered.
    const unconfirm = (): void => this.listeners.notify(null);
    subscriber.on('close', unconfirm);
    subscriber.on('ready', () => void subscriber.subscribe(channel).then(() => this.subscribed(), unconfirm));
  }

  /** The subscription answered: copies read before it are confirmed again; a Cluster's is watched. */
  private subscribed(): void {
    this.listeners.notify(null);
    if (this.subscriber instanceof Cluster) this.watchClusterSubscription(this.subscriber);
  }

  /** Resolves once invalidations are received; ioredis subscribes again by itself after a reconnect. */
  async subscribe(): Promise<void> {
    try {
      await this.subscriber.subscribe(this.channel);
    } catch (error) {
      throw toStoreError(error);
    }
    if (this.subscriber instanceof Cluster) this.watchClusterSubscription(this.subscriber);
  }

  /**
   * A Cluster client emits neither 'close' nor 'ready' when its subscription's connection ends:
   * ioredis (ClusterSubscriber, private) makes a new one at once, maybe to another node, and
   * subscribes it again. That connection's end is heard here instead, and its successor's
   * subscription (ioredis makes none while the pool has no node: then the Cluster's own 'close'
   * and 'ready' tell).
   */
  private watchClusterSubscription(cluster: Cluster): void {
    const current = (): Redis | null | undefined => (cluster as unknown as { subscriber?: { getInstance(): Redis | null } }).subscriber?.getInstance();
    const connection = current();
    if (!connection || this.watched.has(connection)) return;
    this.watched.add(connection);
    connection.once('end', () => {
      this.listeners.notify(null);
      // ioredis's own 'end' listener, added before this one, has made the successor.
      const next = current();
      // Subscribing twice changes nothing; its answer comes after ioredis's own subscription's.
      if (next && next !== connection) next.subscribe(this.channel).then(() => this.subscribed(), () => this.listeners.notify(null));
    });
  }

  async putAccount(account: AccountRecord): Promise<void> {
    await this.writeAccount(account, null, true);
  }

  replaceAccount(account: AccountRecord, expected: AccountRecord | null): Promise<boolean> {
    return this.writeAccount(account, expected, false);
  }

  private async writeAccount(account: AccountRecord, expected: AccountRecord | null, unconditional: boolean): Promise<boolean> {
    const args = [account.id, JSON.stringify(account), expected === null ? '' : JSON.stringify(expected), unconditional ? '1' : ''];
    const reply = await this.redis.evalScript(this.accountScript, this.accountScriptKeys(account.id), args);
    if (typeof reply === 'string') throw new UpstreamClaimedError(account.upstreamId, reply);
    return reply === 1;
  }

  async deleteAccount(expected: AccountRecord): Promise<string[] | null> {
    const reply = await this.redis.evalScript(this.accountScript, this.accountScriptKeys(expected.id), [expected.id, '', JSON.stringify(expected), '']);
    return Array.isArray(reply) ? (reply as string[]) : null;
  }

  private accountScriptKeys(accountId: string): string[] {
    return [this.accountsKey, this.upstreamsKey, this.keysKey, this.accountKeysKey(accountId), this.retiredKey];
  }

  async getAccount(id: string): Promise<AccountRecord | null> {
    const json = await this.redis.run((client) => client.hget(this.accountsKey, id));
    return json === null ? null : (JSON.parse(json) as AccountRecord);
  }

  async listAccounts(): Promise<AccountRecord[]> {
    const values = await this.redis.run((client) => client.hvals(this.accountsKey));
    return byCreation(values.map((json) => JSON.parse(json) as AccountRecord));
  }

  async putKey(key: ApiKeyRecord): Promise<void> {
    const results = await this.redis.run((client) =>
      client
        .multi()
        .hset(this.keysKey, key.id, JSON.stringify(key))
        .sadd(this.accountKeysKey(key.accountId), key.id)
        .exec(),
    );
    for (const [error] of results ?? []) if (error) throw toStoreError(error);
  }

  async replaceKey(key: ApiKeyRecord, expected: ApiKeyRecord): Promise<boolean> {
    return this.replace(this.keysKey, key.id, JSON.stringify(key), expected);
  }

  private async replace(hash: string, id: string, json: string, expected: ApiKeyRecord): Promise<boolean> {
    const reply = await this.redis.evalScript(this.replaceScript, [hash], [id, json, JSON.stringify(expected)]);
    return reply === 1;
  }

  async getKey(id: string): Promise<ApiKeyRecord | null> {
    const json = await this.redis.run((client) => client.hget(this.keysKey, id));
    return json === null ? null : (JSON.parse(json) as ApiKeyRecord);
  }

  async getKeyWithAccount(id: string): Promise<{ key: ApiKeyRecord; account: AccountRecord } | null> {
    const reply = await this.redis.evalScript(this.lookupScript, [this.keysKey, this.accountsKey], [id]);
    if (!Array.isArray(reply)) return null;
    const [key, account] = reply as [string, string];
    return account === '' ? null : { key: JSON.parse(key) as ApiKeyRecord, account: JSON.parse(account) as AccountRecord };
  }

  async listKeys(accountId?: string): Promise<ApiKeyRecord[]> {
    const values = await this.redis.run(async (client) => {
      if (accountId === undefined) return client.hvals(this.keysKey);
      const ids = await client.smembers(this.accountKeysKey(accountId));
      return ids.length === 0 ? [] : client.hmget(this.keysKey, ...ids);
    });
    const keys = values.flatMap((json) => (json === null ? [] : [JSON.parse(json) as ApiKeyRecord]));
    // The index is only added to; a key that moved to another account must not be listed here.
    return byCreation(keys.filter((key) => accountId === undefined || key.accountId === accountId));
  }

  async publishInvalidation(keyId: string): Promise<void> {
    await this.redis.run((client) => client.publish(this.channel, keyId));
  }

  onInvalidation(listener: (keyId: string | null) => void): void {
    this.listeners.add(listener);
  }

  holdsPepper(fingerprint: string, record = true, previous: readonly string[] = []): Promise<boolean | null> {
    return holdsFingerprint(this.redis, '{keys}:pepper', fingerprint, record, previous);
  }

  private accountKeysKey(accountId: string): string {
    return this.redis.key(`{keys}:account-keys:${encodeURIComponent(accountId)}`);
  }
}
