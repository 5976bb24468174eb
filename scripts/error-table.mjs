#!/usr/bin/env node
// Prints the error catalogue (src/shared/errors/catalogue.ts) as a markdown table, for docs/operate.md's
// "Error codes" section. Reads the build: run `npm run build` first.
import { errorTable } from '../dist/shared/errors/error-table.js';

process.stdout.write(`${errorTable()}\n`);
