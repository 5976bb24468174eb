import { describe, expect, it } from 'vitest';
import { AUTOCANNON_MISSING, loadAutocannon } from '../../src/cli/bench.js';
import { CliError } from '../../src/cli/output.js';

// autocannon is an optional dependency: `anvil bench` loads it on demand and, when it is not
// installed, says how to install it instead of failing with a module resolution error.

function notFound(message: string, code = 'ERR_MODULE_NOT_FOUND'): Error {
  return Object.assign(new Error(message), { code });
}

describe('loading autocannon for anvil bench', () => {
  it('loads the installed package', async () => {
    expect(typeof (await loadAutocannon())).toBe('function');
  });

  it('says to install it when the package is missing', async () => {
    const missing = loadAutocannon(() =>
      Promise.reject(notFound("Cannot find package 'autocannon' imported from /x/bench.js")),
    );
    await expect(missing).rejects.toBeInstanceOf(CliError);
    await expect(missing).rejects.toThrow(AUTOCANNON_MISSING);
  });

  it('lets any other failure through as it is', async () => {
    const broken = notFound("Cannot find module 'hdr-histogram-js'", 'MODULE_NOT_FOUND');
    await expect(loadAutocannon(() => Promise.reject(broken))).rejects.toBe(broken);
  });
});
