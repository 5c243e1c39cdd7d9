/**
 * The schema, as in-code migrations for Kysely's `Migrator`, so migrating needs
 * no filesystem (Workers included). Append new entries; never edit old ones.
 */
import { type Kysely, type Migration, type MigrationProvider, sql } from 'kysely'

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
  '0004_verdict': {
    async up(db: Kysely<any>) {
      // The verdict's two thresholds, fixed per run at create (contract, "Paired rollup ... and the verdict").
      await sql`alter table eval_runs add column min_episodes int not null default 10 check (min_episodes between 1 and 10000)`.execute(db)
      await sql`alter table eval_runs add column max_ood_action_share float8 not null default 0.25 check (max_ood_action_share between 0 and 1)`.execute(db)
    },
  },
  '0005_uploads': {
    async up(db: Kysely<any>) {
      // Idempotency-Key (contract, "Safe retries"): one row per client and key,
      // so concurrent retries on several instances meet at the primary key.
      await sql`
        create table idempotency_keys (
          client_id text not null references clients(id) on delete cascade,
          key text not null,
          fingerprint text not null,
          state text not null check (state in ('running', 'done')),
          status int,
          response text,
          locked_at timestamptz not null,
          created_at timestamptz not null,
          primary key (client_id, key)
        )`.execute(db)
      await sql`create index idempotency_keys_created on idempotency_keys (created_at)`.execute(db)
      // Multipart uploads the API started: which episode and kind an upload id
      // belongs to, and the plan its part URLs follow.
      await sql`
        create table multipart_uploads (
          episode_id uuid not null references episodes(id) on delete cascade,
          upload_id text not null,
          kind text not null check (kind in ('video', 'sensors', 'actions')),
          size int8 not null check (size >= 0),
          part_size int8 not null check (part_size > 0),
          part_count int not null check (part_count between 1 and 10000),
          created_at timestamptz not null,
          primary key (episode_id, upload_id)
        )`.execute(db)
    },
  },
  '0006_webhooks': {
    async up(db: Kysely<any>) {
      // The signing secret is kept as issued: signing needs it (unlike API keys, hashed).
      await sql`
        create table webhook_endpoints (
          id text primary key,
          client_id text not null references clients(id) on delete cascade,
          url text not null,
          secret text not null,
          created_at timestamptz not null
        )`.execute(db)
      await sql`create index webhook_endpoints_client on webhook_endpoints (client_id, created_at)`.execute(db)
      // The transactional outbox (src/webhooks/): one row per event and endpoint,
      // written in the transaction that causes the event; `payload` is the exact
      // body, so every retry sends the same bytes under the same id.
      await sql`
        create table webhook_deliveries (
          id text primary key,
          endpoint_id text not null references webhook_endpoints(id) on delete cascade,
          event_type text not null,
          eval_run_id uuid references eval_runs(id) on delete cascade,
          payload text not null,
          status text not null check (status in ('pending', 'delivered', 'failed')),
          attempts int not null default 0,
          next_attempt_at timestamptz not null,
          lease_token text,
          last_attempt_at timestamptz,
          last_status int,
          last_error text,
          created_at timestamptz not null,
          delivered_at timestamptz,
          unique (endpoint_id, event_type, eval_run_id)
        )`.execute(db)
      await sql`create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending'`.execute(db)
      await sql`create index webhook_deliveries_endpoint on webhook_deliveries (endpoint_id, created_at desc)`.execute(db)
    },
  },
  '0007_metadata_search': {
    async up(db: Kysely<any>) {
      // `GET /api/episodes?metadata.k=v` is containment (`metadata @> ...`);
      // jsonb_path_ops indexes exactly that, smaller and faster than the default opclass.
      await sql`create index episodes_metadata on episodes using gin (metadata jsonb_path_ops)`.execute(db)
    },
  },
  '0008_service_secrets': {
    async up(db: Kysely<any>) {
      // Made by the first instance that needs one (the portal's session key), then shared by all.
      await sql`
        create table service_secrets (
          name text primary key,
          value text not null,
          created_at timestamptz not null
        )`.execute(db)
    },
  },
}

/** Provides the in-code migrations to Kysely's `Migrator`. */
export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
}
