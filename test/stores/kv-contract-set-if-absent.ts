import { describe, expect, it } from 'vitest';
import type { KvStore } from '../../src/engine/kv-store.js';

/** What the KvStore contract hands its parts: a fresh namespace, one under a quota, and the clock. */
export interface ContractTools {
  store(suffix?: string): Promise<KvStore>;
  quotaOf(maxBytes: number, suffix?: string): Promise<KvStore>;
  /** Lets `ms` pass (the injected clock, or real time). */
  elapse(ms: number): Promise<void>;
}

/** KvStore.setIfAbsent, part of the contract every backend keeps (kv-contract.ts calls it). */
export function setIfAbsentContract(tools: ContractTools): void {
  describe('setIfAbsent', () => {
    it('stores when the key holds nothing, and leaves a value that is there as it is', async () => {
      const kv = await tools.store();
      expect(await kv.setIfAbsent('k', 'first')).toBe(true);
      expect(await kv.setIfAbsent('k', 'second')).toBe(false);
      expect(await kv.get('k')).toBe('first');
      await kv.set('k', 'third');
      expect(await kv.get('k')).toBe('third');
    });

    it('keeps the ttl of the value that was there; takes the place of an expired one', async () => {
      const kv = await tools.store();
      await kv.set('short', 'old', 150);
      expect(await kv.setIfAbsent('short', 'new')).toBe(false);
      await tools.elapse(150);
      expect(await kv.get('short')).toBeNull();
      expect(await kv.setIfAbsent('short', 'new', 150)).toBe(true);
      expect(await kv.get('short')).toBe('new');
      await tools.elapse(150);
      expect(await kv.get('short')).toBeNull();
    });

    it('one of many concurrent calls stores', async () => {
      const kv = await tools.store();
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => kv.setIfAbsent('race', `v${i}`)));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await kv.get('race')).toBe(`v${results.indexOf(true)}`);
    });

    it('is refused past the quota and changes nothing; a key already there is not a write', async () => {
      const kv = await tools.quotaOf(10);
      expect(await kv.setIfAbsent('ab', '12345678')).toBe(true); // 10: at the quota
      expect(await kv.setIfAbsent('ab', 'a much longer value')).toBe(false);
      await expect(kv.setIfAbsent('c', 'x')).rejects.toMatchObject({ code: 'ANVIL_ERR_QUOTA_KV_BYTES', status: 507 });
      expect(await kv.get('c')).toBeNull();
    });

    it('checks its key, value and ttl as set does', async () => {
      const kv = await tools.store();
      await expect(kv.setIfAbsent('k', 'v', 0)).rejects.toThrow(/ttlMs must be a finite number of milliseconds > 0/);
      await expect(kv.setIfAbsent('k', 42 as unknown as string)).rejects.toThrow(/value must be a string/);
      await expect(kv.setIfAbsent('k'.repeat(1025), 'v')).rejects.toMatchObject({ code: 'ANVIL_ERR_KV_KEY_TOO_LONG' });
      expect(await kv.get('k')).toBeNull();
    });
  });
}
