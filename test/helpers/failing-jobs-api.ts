/**
 * `key: worker` whose `post /fail` queues a job (202) that always fails: one run and three retries,
 * then it is a failed job (start the instance with `--job-backoff 20ms` to get there in a second).
 */
export const FAILING_JOBS_API = `key: worker
endpoints:
  post /fail:
    Queue: { directive: ForTheWorker, identifier: true }
    Fail: { directive: ThrowError, status: 500, message: this job always fails }
`;
