/**
 * The gate's memory of submissions: the duplicate window, cached verdicts and in-flight slots.
 * One interface, three homes: this process (`MemoryLedger`), a fleet's Redis (`RedisLedger`),
 * or the primary process that the workers of one host share (`PrimaryLedger`), so that a second
 * instance refuses a duplicate the first admitted and in-flight caps hold across instances.
 * `createLedger` puts the shared one behind the fleet's fallback: while it fails, the local
 * ledger answers.
 */
import type { Redis } from 'ioredis';
import type { Carried, PrimaryCall, SharedState } from '../../../src/plugin.js';
import { InFlight, type InFlightEntry } from './in-flight.js';
import { storedRefusal, VerdictCache, type CachedRefusal } from './verdict-cache.js';

/**
 * `gap`: a nonce between the state nonce and this one is not in flight; `payer-cap`: the payer
 * already pays for `payerCap` pending transactions.
 */
export type Reservation = 'ok' | 'nonce-in-flight' | 'cap' | 'gap' | 'payer-cap';

export interface ReserveRequest {
  readonly sender: string;
  readonly entry: InFlightEntry;
  /** The sender's state nonce at `entry.head`: slots below it are done. */
  readonly stateNonce: bigint;
  readonly cap: number;
  /** Take a nonce ahead of the state nonce only if every nonce between is in flight (`contiguous_nonces`). */
  readonly contiguous: boolean;
  /** At most this many pending transactions paid by `entry.payer` (a paymaster with code: EIP-8141's 1); none if absent. */
  readonly payerCap?: number;
}

export interface Ledger {
  isAdmitted(hash: string): Promise<boolean>;
  /** Marks `hash` admitted for the duplicate window; false if it already was (anywhere). */
  claim(hash: string): Promise<boolean>;
  unclaim(hash: string): Promise<void>;
  refusal(hash: string): Promise<CachedRefusal | undefined>;
  remember(hash: string, refusal: CachedRefusal): Promise<void>;
  /** Frees slots the head shows done, then takes one for `entry` if the nonce and cap allow. */
  reserve(request: ReserveRequest): Promise<Reservation>;
  release(sender: string, nonce: bigint, hash: string): Promise<void>;
  /** The submission target took `hash` when the head was `head`: pending is counted from there (in-flight.ts). */
  acknowledged(sender: string, nonce: bigint, hash: string, head: bigint): Promise<void>;
  /**
   * Wei the payer's in-flight transactions may still spend, judged at `head`: reservations taken
   * `skipAfterBlocks` or more heads before it are done, and dropped.
   */
  reserved(payer: string, head: bigint): Promise<bigint>;
  /**
   * The sender's transactions in flight at `head` (nonce at or above `stateNonce`, not yet
   * skipped), with the head each counts from: for a refusal that names what it waits for.
   */
  pending(sender: string, stateNonce: bigint, head: bigint): Promise<readonly InFlightEntry[]>;
  /**
   * Whether a transaction in flight at `head` carries an EIP-7702 authorization that delegates
   * `account` (`entry.authorities` of a reservation): it holds as long as that slot does, however
   * the slot ends (released, executed, skipped).
   */
  delegating(account: string, head: bigint): Promise<boolean>;
  /** Whether `payer` pays for a transaction in flight at `head` of another sender (a sponsor at work). */
  sponsoring(payer: string, head: bigint): Promise<boolean>;
}

export interface LedgerOptions {
  readonly duplicateWindowMs: number;
  readonly verdictTtlMs: number;
  readonly maxEntries: number;
  readonly skipAfterBlocks: bigint;
}

/** How often the memory ledger drops slots of senders that never came back. */
const SWEEP_EVERY_MS = 60_000;

export class MemoryLedger implements Ledger {
  private readonly cache: VerdictCache;
  private readonly inFlight: InFlight;
  private lastSweep = Date.now();

  constructor(options: LedgerOptions) {
    this.cache = new VerdictCache(options);
    this.inFlight = new InFlight(options.skipAfterBlocks);
  }

  /** A reload's new numbers: the duplicate window, verdicts and in-flight slots are kept. */
  retune(options: LedgerOptions): void {
    this.cache.retune(options);
    this.inFlight.skipAfterBlocks = options.skipAfterBlocks;
  }

  async isAdmitted(hash: string) {
    return this.cache.isAdmitted(hash);
  }
  async claim(hash: string) {
    if (this.cache.isAdmitted(hash)) return false;
    this.cache.admit(hash);
    return true;
  }
  async unclaim(hash: string) {
    this.cache.forget(hash);
  }
  async refusal(hash: string) {
    return this.cache.refusal(hash);
  }
  async remember(hash: string, refusal: CachedRefusal) {
    this.cache.refuse(hash, refusal);
  }
  async reserve({ sender, entry, stateNonce, cap, contiguous, payerCap }: ReserveRequest): Promise<Reservation> {
    if (Date.now() - this.lastSweep > SWEEP_EVERY_MS) {
      this.lastSweep = Date.now();
      this.inFlight.sweep(entry.head);
    }
    const pending = this.inFlight.pending(sender, stateNonce, entry.head);
    if (pending.has(entry.nonce)) return 'nonce-in-flight';
    if (pending.size >= cap) return 'cap';
    // Pending nonces are at or above the state nonce: all of those below this one are there, or not.
    if (contiguous && [...pending.keys()].filter((nonce) => nonce < entry.nonce).length !== Number(entry.nonce - stateNonce)) return 'gap';
    if (payerCap !== undefined && this.inFlight.paidBy(entry.payer, entry.head) >= payerCap) return 'payer-cap';
    this.inFlight.add(sender, entry);
    return 'ok';
  }
  async release(sender: string, nonce: bigint, hash: string) {
    this.inFlight.release(sender, nonce, hash);
  }
  async acknowledged(sender: string, nonce: bigint, hash: string, head: bigint) {
    this.inFlight.acknowledge(sender, nonce, hash, head);
  }
  async reserved(payer: string, head: bigint) {
    return this.inFlight.reserved(payer, head);
  }
  async pending(sender: string, stateNonce: bigint, head: bigint) {
    return [...this.inFlight.pending(sender, stateNonce, head).values()];
  }
  async delegating(account: string, head: bigint) {
    return this.inFlight.delegating(account, head);
  }
  async sponsoring(payer: string, head: bigint) {
    return this.inFlight.sponsoring(payer, head);
  }
}

const PREFIX = 'svc-ingress:gate';
/** In-flight keys outlive any slot they hold; they only bound what an abandoned sender leaves. */
const IN_FLIGHT_TTL_MS = 10 * 60_000;

/**
 * Takes an in-flight slot atomically across the fleet. Slots are `nonce -> hash|payer|cost|head`
 * in one hash per sender; each payer's reservations are `hash -> cost|head`, the head so that
 * RESERVED_SCRIPT can drop those of senders who never come back to prune their own. Nonces and
 * heads are compared as Lua numbers (doubles): exact below 2^53, far beyond any real nonce or height.
 */
const RESERVE_SCRIPT = `
local slots = KEYS[1]
local nonce, value, stateNonce, head, skip, cap, ttl, payerPrefix, below, payerCap, delegatingPrefix =
  ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[8], tonumber(ARGV[9]), tonumber(ARGV[10]), ARGV[11]
local entries = redis.call('HGETALL', slots)
local count, before = 0, 0
for i = 1, #entries, 2 do
  local h, payer, cost, at = string.match(entries[i + 1], '^([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
  if tonumber(entries[i]) < stateNonce or head >= tonumber(at) + skip then
    redis.call('HDEL', slots, entries[i])
    redis.call('HDEL', payerPrefix .. payer, h)
  else
    count = count + 1
    if tonumber(entries[i]) < tonumber(nonce) then before = before + 1 end
  end
end
if redis.call('HEXISTS', slots, nonce) == 1 then return 'nonce-in-flight' end
if count >= cap then return 'cap' end
if below >= 0 and before ~= below then return 'gap' end
local h, payer, cost, at = string.match(value, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
if payerCap >= 0 then
  local held = redis.call('HGETALL', payerPrefix .. payer)
  local live = 0
  for i = 1, #held, 2 do
    local c, a = string.match(held[i + 1], '^([^|]*)|([^|]*)$')
    if a == nil or head >= tonumber(a) + skip then
      redis.call('HDEL', payerPrefix .. payer, held[i])
    else
      live = live + 1
    end
  end
  if live >= payerCap then return 'payer-cap' end
end
redis.call('HSET', slots, nonce, value)
redis.call('PEXPIRE', slots, ttl)
redis.call('HSET', payerPrefix .. payer, h, cost .. '|' .. at)
redis.call('PEXPIRE', payerPrefix .. payer, ttl)
for i = 12, #ARGV do
  redis.call('HSET', delegatingPrefix .. ARGV[i], h, slots .. '|' .. nonce)
  redis.call('PEXPIRE', delegatingPrefix .. ARGV[i], ttl)
end
return 'ok'
`;

/**
 * Whether any delegation of the account in KEYS[1] (`hash -> slots key|nonce`, written by
 * RESERVE_SCRIPT) is still a live slot at head ARGV[1]: it lives exactly as long as its slot
 * (released, pruned or skipped there), so no release path has to know of it; dead ones are dropped.
 */
const DELEGATING_SCRIPT = `
local head, skip = tonumber(ARGV[1]), tonumber(ARGV[2])
local fields = redis.call('HGETALL', KEYS[1])
local live = 0
for i = 1, #fields, 2 do
  local slots, nonce = string.match(fields[i + 1], '^(.*)|([^|]*)$')
  local value = slots and redis.call('HGET', slots, nonce)
  local h, at
  if value then h, at = string.match(value, '^([^|]*)|[^|]*|[^|]*|([^|]*)$') end
  if h == fields[i] and head < tonumber(at) + skip then
    live = live + 1
  else
    redis.call('HDEL', KEYS[1], fields[i])
  end
end
return live
`;

const RELEASE_SCRIPT = `
local value = redis.call('HGET', KEYS[1], ARGV[1])
if not value then return 0 end
local h, payer = string.match(value, '^([^|]*)|([^|]*)|')
if h ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', ARGV[3] .. payer, h)
return 1
`;

/** Moves a slot's head (and its payer reservation's) forward to ARGV[3], if it still holds ARGV[2]. */
const ACKNOWLEDGED_SCRIPT = `
local value = redis.call('HGET', KEYS[1], ARGV[1])
if not value then return 0 end
local h, payer, cost, at = string.match(value, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
if h ~= ARGV[2] or tonumber(ARGV[3]) <= tonumber(at) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], h .. '|' .. payer .. '|' .. cost .. '|' .. ARGV[3])
if redis.call('HEXISTS', ARGV[4] .. payer, h) == 1 then
  redis.call('HSET', ARGV[4] .. payer, h, cost .. '|' .. ARGV[3])
end
return 1
`;

/**
 * Drops the payer's reservations done at head ARGV[1], and returns the costs of the others as
 * strings: wei amounts exceed what a Lua double holds exactly, so JS sums them. A bare `cost`
 * field (written before the head was stored, by an older instance) cannot be judged: kept, it
 * would count for as long as new reservations push the hash's TTL back, so it is dropped too.
 */
const RESERVED_SCRIPT = `
local head, skip = tonumber(ARGV[1]), tonumber(ARGV[2])
local fields = redis.call('HGETALL', KEYS[1])
local live = {}
for i = 1, #fields, 2 do
  local cost, at = string.match(fields[i + 1], '^([^|]*)|([^|]*)$')
  if at == nil or head >= tonumber(at) + skip then
    redis.call('HDEL', KEYS[1], fields[i])
  else
    live[#live + 1] = cost
  end
end
return live
`;

/**
 * Whether the payer's reservations (KEYS[1]) at head ARGV[1] hold one not among its own slots
 * (KEYS[2]): a transaction of another sender it pays for. Its own are told apart by hash, so that
 * one it sent, executed and not yet pruned, is never taken for another's.
 */
const SPONSORING_SCRIPT = `
local head, skip = tonumber(ARGV[1]), tonumber(ARGV[2])
local own = {}
local slots = redis.call('HVALS', KEYS[2])
for i = 1, #slots do
  own[string.match(slots[i], '^([^|]*)|')] = true
end
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local at = string.match(fields[i + 1], '^[^|]*|([^|]*)$')
  if at ~= nil and head < tonumber(at) + skip and not own[fields[i]] then return 1 end
end
return 0
`;

export class RedisLedger implements Ledger {
  constructor(
    private readonly redis: Redis,
    private readonly options: LedgerOptions,
  ) {}

  async isAdmitted(hash: string) {
    return (await this.redis.exists(`${PREFIX}:admitted:${hash}`)) === 1;
  }
  async claim(hash: string) {
    return (await this.redis.set(`${PREFIX}:admitted:${hash}`, '1', 'PX', this.options.duplicateWindowMs, 'NX')) === 'OK';
  }
  async unclaim(hash: string) {
    await this.redis.del(`${PREFIX}:admitted:${hash}`);
  }
  async refusal(hash: string) {
    const text = await this.redis.get(`${PREFIX}:refused:${hash}`);
    if (text === null) return undefined;
    const stored = JSON.parse(text) as Omit<CachedRefusal, 'head'> & { head: string | null };
    return { ...stored, head: stored.head === null ? undefined : BigInt(stored.head) };
  }
  async remember(hash: string, refusal: CachedRefusal) {
    // Its dependencies as a digest (verdict-cache.ts): a refusal stays under 2 KB.
    const stored = { ...storedRefusal(refusal), head: refusal.head === undefined ? null : refusal.head.toString() };
    await this.redis.set(`${PREFIX}:refused:${hash}`, JSON.stringify(stored), 'PX', this.options.verdictTtlMs);
  }
  async reserve({ sender, entry, stateNonce, cap, contiguous, payerCap }: ReserveRequest): Promise<Reservation> {
    const value = `${entry.hash}|${entry.payer}|${entry.cost}|${entry.head}`;
    return (await this.redis.eval(
      RESERVE_SCRIPT,
      1,
      `${PREFIX}:inflight:${sender}`,
      entry.nonce.toString(),
      value,
      stateNonce.toString(),
      entry.head.toString(),
      this.options.skipAfterBlocks.toString(),
      String(cap),
      String(IN_FLIGHT_TTL_MS),
      `${PREFIX}:reserved:`,
      // How many nonces below this one must be in flight; -1: no such rule.
      contiguous ? (entry.nonce - stateNonce).toString() : '-1',
      payerCap === undefined ? '-1' : String(payerCap),
      `${PREFIX}:delegating:`,
      ...(entry.authorities ?? []),
    )) as Reservation;
  }
  async release(sender: string, nonce: bigint, hash: string) {
    await this.redis.eval(RELEASE_SCRIPT, 1, `${PREFIX}:inflight:${sender}`, nonce.toString(), hash, `${PREFIX}:reserved:`);
  }
  async acknowledged(sender: string, nonce: bigint, hash: string, head: bigint) {
    await this.redis.eval(
      ACKNOWLEDGED_SCRIPT,
      1,
      `${PREFIX}:inflight:${sender}`,
      nonce.toString(),
      hash,
      head.toString(),
      `${PREFIX}:reserved:`,
    );
  }
  async reserved(payer: string, head: bigint) {
    const key = `${PREFIX}:reserved:${payer}`;
    const costs = (await this.redis.eval(RESERVED_SCRIPT, 1, key, head.toString(), this.options.skipAfterBlocks.toString())) as string[];
    return costs.reduce((sum, cost) => sum + BigInt(cost), 0n);
  }
  async pending(sender: string, stateNonce: bigint, head: bigint) {
    const slots = await this.redis.hgetall(`${PREFIX}:inflight:${sender}`);
    return Object.entries(slots)
      .map(([nonce, value]) => {
        const [hash, payer, cost, since] = value.split('|');
        return { hash: hash!, nonce: BigInt(nonce), payer: payer!, cost: BigInt(cost!), head: BigInt(since!) };
      })
      .filter((entry) => entry.nonce >= stateNonce && head < entry.head + this.options.skipAfterBlocks);
  }
  async delegating(account: string, head: bigint) {
    const live = await this.redis.eval(
      DELEGATING_SCRIPT,
      1,
      `${PREFIX}:delegating:${account}`,
      head.toString(),
      this.options.skipAfterBlocks.toString(),
    );
    return Number(live) > 0;
  }
  async sponsoring(payer: string, head: bigint) {
    const found = await this.redis.eval(
      SPONSORING_SCRIPT,
      2,
      `${PREFIX}:reserved:${payer}`,
      `${PREFIX}:inflight:${payer}`,
      head.toString(),
      this.options.skipAfterBlocks.toString(),
    );
    return found === 1;
  }
}

const PRIMARY_LEDGER_KEY = 'ledger';

/** A worker's handle on the MemoryLedger that the primary process holds for all workers. */
export class PrimaryLedger implements Ledger {
  private readonly options: LedgerOptions;
  /** Whether the primary's ledger has this worker's numbers (a reload may have brought new ones). */
  private tuned = false;

  constructor(
    private readonly callPrimary: PrimaryCall,
    { duplicateWindowMs, verdictTtlMs, maxEntries, skipAfterBlocks }: LedgerOptions,
  ) {
    // Only the ledger's own options cross to the primary (the gate's carry more).
    this.options = { duplicateWindowMs, verdictTtlMs, maxEntries, skipAfterBlocks };
  }

  isAdmitted(hash: string) {
    return this.call<boolean>('isAdmitted', hash);
  }
  claim(hash: string) {
    return this.call<boolean>('claim', hash);
  }
  unclaim(hash: string) {
    return this.call<void>('unclaim', hash);
  }
  refusal(hash: string) {
    return this.call<CachedRefusal | undefined>('refusal', hash);
  }
  remember(hash: string, refusal: CachedRefusal) {
    return this.call<void>('remember', hash, storedRefusal(refusal));
  }
  reserve(request: ReserveRequest) {
    return this.call<Reservation>('reserve', request);
  }
  release(sender: string, nonce: bigint, hash: string) {
    return this.call<void>('release', sender, nonce, hash);
  }
  acknowledged(sender: string, nonce: bigint, hash: string, head: bigint) {
    return this.call<void>('acknowledged', sender, nonce, hash, head);
  }
  reserved(payer: string, head: bigint) {
    return this.call<bigint>('reserved', payer, head);
  }
  pending(sender: string, stateNonce: bigint, head: bigint) {
    return this.call<readonly InFlightEntry[]>('pending', sender, stateNonce, head);
  }
  delegating(account: string, head: bigint) {
    return this.call<boolean>('delegating', account, head);
  }
  sponsoring(payer: string, head: bigint) {
    return this.call<boolean>('sponsoring', payer, head);
  }

  /**
   * One ledger in the primary for every worker, whatever its numbers: a reload that changes them
   * retunes it (with this handle's first call) rather than starting an empty one beside it.
   */
  private async call<T>(method: keyof Ledger, ...args: unknown[]): Promise<T> {
    if (!this.tuned) {
      await this.callPrimary('gate-ledger', PRIMARY_LEDGER_KEY, this.options, 'retune', [this.options]);
      this.tuned = true;
    }
    return (await this.callPrimary('gate-ledger', PRIMARY_LEDGER_KEY, this.options, method, args)) as T;
  }
}

/**
 * This process's ledger as a reload finds it: the duplicate window, verdicts and in-flight slots
 * of the runtime being replaced, so that a SIGHUP never forwards an admitted transaction again.
 * New numbers retune it once the new runtime is in place (MemoryLedger.retune).
 */
export function carriedLedger(carried: Carried, options: LedgerOptions): MemoryLedger {
  return carried.keep(
    'gate:ledger',
    () => new MemoryLedger(options),
    (ledger) => ledger.retune(options),
  );
}

/** The shared ledger (Redis, or the primary process), with the local one answering while it fails. */
export function createLedger(state: SharedState, options: LedgerOptions, local = new MemoryLedger(options)): Ledger {
  const shared = state.home<Ledger>({
    redis: (client) => new RedisLedger(client, options),
    primary: (call) => new PrimaryLedger(call, options),
  });
  if (shared === undefined) return local;
  const either =
    <A extends unknown[], R>(what: string, method: (ledger: Ledger) => (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      state.either(
        `gate ${what}`,
        () => method(shared).apply(shared, args),
        () => method(local).apply(local, args),
      );
  return {
    isAdmitted: either('duplicate window', (l) => l.isAdmitted),
    claim: either('duplicate window', (l) => l.claim),
    unclaim: either('duplicate window', (l) => l.unclaim),
    refusal: either('verdict cache', (l) => l.refusal),
    remember: either('verdict cache', (l) => l.remember),
    reserve: either('in-flight count', (l) => l.reserve),
    // Also here, whatever the shared one answers: a slot taken here while it failed is given
    // back once the release comes, rather than held until its head shows it skipped.
    release: async (sender, nonce, hash) => {
      await local.release(sender, nonce, hash);
      await either('in-flight count', (l) => l.release)(sender, nonce, hash);
    },
    acknowledged: either('in-flight count', (l) => l.acknowledged),
    reserved: either('in-flight count', (l) => l.reserved),
    pending: either('in-flight count', (l) => l.pending),
    delegating: either('in-flight count', (l) => l.delegating),
    sponsoring: either('in-flight count', (l) => l.sponsoring),
  };
}
