/**
 * Advisory lock keys of the control plane, in the two-int4 key space of Postgres (apart from the
 * one-bigint space the APIs' own code could reach): the class, then the object.
 */
export const LOCK_CLASS = 0x616e_7601; // "anv" + 1
export const MIGRATION_LOCK = 1;
export const HOSTS_LOCK = 2;
export const BLOBS_LOCK = 3;

/** SQL taking the per-API transaction lock; `$1` is `host/key`. Different APIs hash apart (collisions only serialise). */
export const API_LOCK_SQL = `SELECT pg_advisory_xact_lock(${LOCK_CLASS + 1}, hashtext($1))`;
