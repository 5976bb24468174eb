/** The names quota refusals are counted under (`anvil_quota_refusals_total{quota}`). */
export const QUOTA_NAMES = {
  jobPayload: 'job_payload',
  queuedJobs: 'queued_jobs',
  queuedJobBytes: 'queued_job_bytes',
  hostDisk: 'host_disk',
  kvBytes: 'kv_bytes',
  filesBytes: 'files_bytes',
  databaseBytes: 'database_bytes',
  responseBuffer: 'response_buffer',
  responseHeaders: 'response_headers',
  responseHeaderBytes: 'response_header_bytes',
  busCalls: 'bus_calls',
} as const;
