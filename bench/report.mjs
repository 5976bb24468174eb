// Writes bench/RESULTS.md from the benchmarks' results: the machine, a table of every target
// (measured, target, met/missed and by how much), then each benchmark's tables, notes and
// per-run figures. A benchmark that failed gets its error instead of its figures.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { BENCH_DIR, ROOT } from './lib/instance.mjs';
import { saturationTool } from './lib/load.mjs';

/** Facts about the machine and the checkout, taken when the suite starts. */
export function machineFacts() {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8' }).trim();
    if (dirty) commit += ' (with uncommitted changes under src/)';
  } catch {
    // not a git checkout
  }
  const cpus = os.cpus();
  return {
    date: new Date().toISOString().replace('T', ' ').slice(0, 16) + ' UTC',
    cpu: `${cpus[0]?.model ?? 'unknown CPU'}, ${os.availableParallelism()} cores`,
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM`,
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    commit,
    loadStart: os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
  };
}

const escape = (cell) => String(cell).replace(/\|/g, '\\|').replace(/\n/g, ' ');

function table(columns, rows) {
  return [
    `| ${columns.map(escape).join(' | ')} |`,
    `|${columns.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`,
    ...rows.map((r) => `| ${r.map(escape).join(' | ')} |`),
  ].join('\n');
}

/**
 * sections: [{ id, title, tables: [{ caption, columns, rows }], targets: [checkTarget…], notes: [],
 * perRun: [] } | { id, title, error }]. Returns the path written.
 */
export function writeReport(sections, { facts, config, seconds: elapsed, file = join(BENCH_DIR, 'RESULTS.md') }) {
  const out = [];
  out.push('# Anvil benchmarks (issues 7 and 20)');
  out.push('');
  out.push(`Written by \`npm run bench\` (bench/run.mjs) on ${facts.date}, in ${Math.round(elapsed / 60)} min.`);
  out.push('');
  out.push(`- Machine: ${facts.cpu}, ${facts.memory}, ${facts.os}`);
  out.push(`- Node ${facts.node}; Anvil at commit ${facts.commit}`);
  out.push(
    `- Load average (1, 5, 15 min) at start ${facts.loadStart}, at end ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} — other work on this machine skews the figures`,
  );
  out.push(
    `- Settings: BENCH_SECONDS=${config.seconds} (each measured load), BENCH_RUNS=${config.runs} (each figure is the median of the runs; a ratio is taken within each run, then its median), BENCH_CONNECTIONS=${config.connections}; saturating load with ${saturationTool === 'wrk' ? 'wrk (`wrk -t1`)' : 'autocannon (wrk not found)'}, fixed-rate and sequential loads with bench/lib/load.mjs`,
  );
  out.push('');

  out.push('## Targets');
  out.push('');
  const targetRows = [];
  for (const s of sections) {
    if (s.error) targetRows.push([s.title, 'benchmark failed', '', 'not measured']);
    for (const t of s.targets ?? [])
      targetRows.push([
        t.name,
        t.display,
        t.target,
        `${t.met ? '**met**' : '**missed**'} (${t.by.replace(/^(met|missed), /, '')})${t.note ? `; ${t.note}` : ''}`,
      ]);
  }
  out.push(table(['figure', 'measured', 'target', 'result'], targetRows));
  out.push('');

  for (const s of sections) {
    out.push(`## ${s.title}`);
    out.push('');
    if (s.error) {
      out.push('The benchmark failed:');
      out.push('');
      out.push('```');
      out.push(s.error);
      out.push('```');
      out.push('');
      continue;
    }
    for (const t of s.tables ?? []) {
      if (t.caption) out.push(`${t.caption}:`, '');
      out.push(table(t.columns, t.rows));
      out.push('');
    }
    for (const note of s.notes ?? []) out.push(`- ${note}`);
    if (s.notes?.length) out.push('');
    if (s.perRun?.length) {
      out.push('<details><summary>Each run</summary>');
      out.push('');
      for (const line of s.perRun) out.push(`- ${line}`);
      out.push('');
      out.push('</details>');
      out.push('');
    }
  }
  // Analyses written by hand (profiles, probes) ride along, so a new run keeps them beside its figures.
  const notes = join(BENCH_DIR, 'notes');
  if (existsSync(notes))
    for (const name of readdirSync(notes)
      .filter((n) => n.endsWith('.md'))
      .sort())
      out.push(readFileSync(join(notes, name), 'utf8').trimEnd(), '');
  writeFileSync(file, out.join('\n'));
  return file;
}
