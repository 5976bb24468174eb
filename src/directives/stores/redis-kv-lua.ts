/**
 * The Lua scripts of the Redis key-value store (redis-kv.ts): each write is one script, atomic in
 * Redis, that keeps the namespace's byte accounting beside the data (see redis-kv.ts's header).
 */

// Every script: KEYS = the data key, then the namespace's bytes, sizes and expiry; the key as the
// API wrote it is an argument (its entry in sizes and expiry). A quota of '' is none.
const ACCOUNTING_LUA = `
local function now_ms()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local function reap(now, limit)
  local gone = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now, 'LIMIT', 0, limit)
  for _, member in ipairs(gone) do
    local size = redis.call('HGET', KEYS[3], member)
    if size then
      redis.call('DECRBY', KEYS[2], size)
      redis.call('HDEL', KEYS[3], member)
    end
    redis.call('ZREM', KEYS[4], member)
  end
end
local function used()
  return tonumber(redis.call('GET', KEYS[2]) or '0')
end
local function counted(key)
  return tonumber(redis.call('HGET', KEYS[3], key) or '0')
end
-- Whether a write that makes \`key\` take \`size\` bytes fits the quota (a write that does not grow always does).
local function fits(key, size, quota, now)
  if quota == '' or size <= counted(key) then return true end
  if used() - counted(key) + size <= tonumber(quota) then return true end
  reap(now, 10000)
  return used() - counted(key) + size <= tonumber(quota)
end
local function account(key, size, expires_at)
  redis.call('INCRBY', KEYS[2], size - counted(key))
  redis.call('HSET', KEYS[3], key, size)
  if expires_at then redis.call('ZADD', KEYS[4], expires_at, key) else redis.call('ZREM', KEYS[4], key) end
end
`;

// ARGV: key, value, ttl ms ('' = none), quota, '1' to write only when the key holds no value.
// Returns {1, 0}, {2, 0} when the key held a value (nothing written), or {0, bytes the write would make}.
export const SET_LUA = `${ACCOUNTING_LUA}
local now = now_ms()
reap(now, 100)
if ARGV[5] == '1' and redis.call('EXISTS', KEYS[1]) == 1 then return {2, 0} end
local size = string.len(ARGV[1]) + string.len(ARGV[2])
if not fits(ARGV[1], size, ARGV[4], now) then return {0, used() - counted(ARGV[1]) + size} end
if ARGV[3] == '' then
  redis.call('SET', KEYS[1], ARGV[2])
  account(ARGV[1], size, nil)
else
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  account(ARGV[1], size, now + tonumber(ARGV[3]))
end
return {1, 0}
`;

// ARGV: key.
export const DELETE_LUA = `${ACCOUNTING_LUA}
redis.call('UNLINK', KEYS[1])
redis.call('DECRBY', KEYS[2], counted(ARGV[1]))
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
return 1
`;

// ARGV: by, ttl ms, key, quota. INCRBY checks the value (an integer) and is undone when the result
// leaves ±(2^53-1) (Lua numbers are doubles: the check is exact there, where JS needs it) or the
// quota; PEXPIRE only when the key has no expiry yet (new, or expired and so gone).
export const INCREMENT_LUA = `${ACCOUNTING_LUA}
local now = now_ms()
reap(now, 100)
local existed = redis.call('EXISTS', KEYS[1])
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
local function undo()
  if existed == 0 then redis.call('DEL', KEYS[1]) else redis.call('DECRBY', KEYS[1], ARGV[1]) end
end
if value > 9007199254740991 or value < -9007199254740991 then
  undo()
  return redis.error_reply('ANVIL_OUT_OF_RANGE counter would leave the safe integer range')
end
local size = string.len(ARGV[3]) + redis.call('STRLEN', KEYS[1])
if not fits(ARGV[3], size, ARGV[4], now) then
  local would = used() - counted(ARGV[3]) + size
  undo()
  return redis.error_reply('ANVIL_KV_QUOTA ' .. would)
end
local ttl = redis.call('PTTL', KEYS[1])
local expires_at = nil
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
  expires_at = now + ttl
else
  expires_at = tonumber(redis.call('ZSCORE', KEYS[4], ARGV[3]) or (now + ttl))
end
account(ARGV[3], size, expires_at)
return {value, ttl}
`;

// ARGV: key, by, the window's end, its span, keep ms, quota. The rule of window-counter.ts; Lua
// numbers are doubles, exact for every safe integer, written back with %.0f (never an exponent).
export const WINDOW_COUNT_LUA = `${ACCOUNTING_LUA}
local now = now_ms()
reap(now, 100)
local value = tonumber(ARGV[2])
local ends = tonumber(ARGV[3])
local stored = redis.call('GET', KEYS[1])
if stored then
  local count, stored_ends = string.match(stored, '^(%-?%d+)@(%d+)$')
  if not count then return redis.error_reply('ANVIL_NOT_WINDOW the key holds a value that is not a window counter') end
  count = tonumber(count)
  stored_ends = tonumber(stored_ends)
  if stored_ends >= ends then
    value = count + value
    if stored_ends - ends <= tonumber(ARGV[4]) then ends = stored_ends end
  end
end
if value > 9007199254740991 or value < -9007199254740991 then
  return redis.error_reply('ANVIL_OUT_OF_RANGE counter would leave the safe integer range')
end
local text = string.format('%.0f@%.0f', value, ends)
local size = string.len(ARGV[1]) + string.len(text)
if not fits(ARGV[1], size, ARGV[6], now) then return redis.error_reply('ANVIL_KV_QUOTA ' .. (used() - counted(ARGV[1]) + size)) end
redis.call('SET', KEYS[1], text, 'PX', ARGV[5])
account(ARGV[1], size, now + tonumber(ARGV[5]))
return {value, ends}
`;
