/**
 * The schema, as in-code migrations for Kysely's `Migrator`, so migrating needs
 * no filesystem (Workers included). Append new entries; never edit old ones.
 */
import { sql, type Kysely, type Migration, type MigrationProvider } from 'kysely'

const migrations: Record<string, Migration> = {
  '0001_ingest': {
    async up(db: Kysely<any>) {
      await sql`
        create table clients (
          id text primary key,
          name text not null unique,
          created_at timestamptz not null
        )`.execute(db)
      await sql`
        create table api_keys (
          key_id text primary key,
          client_id text not null references clients(id) on delete cascade,
          secret_sha256 text not null,
          created_at timestamptz not null,
          revoked_at timestamptz
        )`.execute(db)
      await sql`create index api_keys_client on api_keys (client_id)`.execute(db)
      await sql`
        create table episodes (
          id uuid primary key,
          client_id text not null references clients(id) on delete cascade,
          name text,
          source text not null check (source in ('real', 'sim', 'replay')),
          robot text,
          policy_version text,
          env_version text,
          git_sha text,
          seed int8,
          fps float8 check (fps > 0),
          metadata jsonb not null default '{}',
          status text not null check (status in ('recording', 'ready', 'failed', 'archived')),
          duration_s float8 check (duration_s >= 0),
          bytes_total int8 check (bytes_total >= 0),
          artifacts text[] not null default '{}',
          created_at timestamptz not null,
          updated_at timestamptz not null
        )`.execute(db)
      // Listing is per client, newest first, with (created_at, id) as the cursor.
      await sql`create index episodes_client_created on episodes (client_id, created_at desc, id desc)`.execute(db)
    },
  },
  '0002_eval': {
    async up(db: Kysely<any>) {
      await sql`
        create table eval_runs (
          id uuid primary key,
          client_id text not null references clients(id) on delete cascade,
          name text not null,
          status text not null check (status in ('pending', 'completed')),
          candidate_policy_version text not null,
          baseline_policy_version text,
          metadata jsonb not null default '{}',
          runner_kind text not null default 'local',
          summary jsonb,
          created_at timestamptz not null,
          updated_at timestamptz not null
        )`.execute(db)
      await sql`create index eval_runs_client_created on eval_runs (client_id, created_at desc, id desc)`.execute(db)
      await sql`
        create table eval_results (
          eval_run_id uuid not null references eval_runs(id) on delete cascade,
          baseline_episode_id uuid not null references episodes(id) on delete cascade,
          position int not null,
          status text not null check (status in ('pending', 'done', 'failed', 'skipped')),
          error text,
          metrics jsonb,
          replay_episode_id uuid,
          updated_at timestamptz not null,
          primary key (eval_run_id, baseline_episode_id)
        )`.execute(db)
      await sql`create index eval_results_baseline on eval_results (baseline_episode_id)`.execute(db)
    },
  },
}

/** Provides the in-code migrations to Kysely's `Migrator`. */
export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
}
