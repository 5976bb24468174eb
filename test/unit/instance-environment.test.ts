import { describe, expect, it } from 'vitest';
import { readInstanceEnvironment } from '../../src/cli/environment.js';

describe('readInstanceEnvironment', () => {
  it('gives the defaults of an empty environment', () => {
    expect(readInstanceEnvironment({})).toEqual({
      publicHostKey: null,
      redisUrl: null,
      databaseUrl: null,
      redisPrefix: 'anvil:',
      egressAllow: null,
      metricsToken: null,
      cellNodeFlags: [],
      cellMalloc: null,
      ldPreload: null,
      logLevel: 'info',
    });
  });

  it('reads every variable the instance uses', () => {
    const env = readInstanceEnvironment({
      ANVIL_PUBLIC_HOST_KEY: 'key',
      REDIS_URL: 'redis://127.0.0.1:6379',
      DATABASE_URL: 'postgres://anvil@db.internal:5432/anvil',
      ANVIL_REDIS_PREFIX: 'other:',
      ANVIL_EGRESS_ALLOW: '127.0.0.1,10.0.0.0/8',
      ANVIL_METRICS_TOKEN: 'token',
      ANVIL_CELL_NODE_FLAGS: '--max-semi-space-size=8  --stack-trace-limit=20',
      ANVIL_CELL_MALLOC: 'system',
      LD_PRELOAD: '/opt/lib/libtrace.so',
      ANVIL_LOG_LEVEL: 'warn',
    });
    expect(env).toEqual({
      publicHostKey: 'key',
      redisUrl: 'redis://127.0.0.1:6379',
      databaseUrl: 'postgres://anvil@db.internal:5432/anvil',
      redisPrefix: 'other:',
      egressAllow: '127.0.0.1,10.0.0.0/8',
      metricsToken: 'token',
      cellNodeFlags: ['--max-semi-space-size=8', '--stack-trace-limit=20'],
      cellMalloc: 'system',
      ldPreload: '/opt/lib/libtrace.so',
      logLevel: 'warn',
    });
  });
});
