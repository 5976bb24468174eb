import { withMarkedSection } from '../../shared/text/marked-section.js';
import { ADMIN_ENDPOINTS } from './admin-endpoints.js';

export const ENDPOINTS_TABLE_START =
  '<!-- admin-endpoints: generated from src/front/admin/admin-endpoints.ts by `npm run docs` -->';
export const ENDPOINTS_TABLE_END = '<!-- admin-endpoints:end -->';

const CREDENTIALS = { host: "the host's key", metrics: 'loopback or bearer token', none: 'none' } as const;

/** docs/operate.md's table of the admin host's endpoints. */
export function endpointsTable(): string {
  const rows = ADMIN_ENDPOINTS.map(
    (e) =>
      `| \`${e.method} ${e.path.replace(/:(\w+)/g, '<$1>')}\` | ${CREDENTIALS[e.auth]} | ${e.doc.replace(/\|/g, '\\|')} | ${e.see} |`,
  );
  return ['| endpoint | credentials | what | details |', '|---|---|---|---|', ...rows].join('\n');
}

/** `text` (docs/operate.md) with the table between its markers replaced. */
export function withEndpointsTable(text: string): string {
  return withMarkedSection(text, ENDPOINTS_TABLE_START, ENDPOINTS_TABLE_END, endpointsTable());
}
