/** Help texts of every verb (`episodic <verb> --help`). */
export const EXIT_CODES = `Exit codes:
  0  success
  1  unexpected failure (server error, bug)
  2  usage error (unknown verb, bad flag or argument)
  3  configuration error (environment, credentials file, missing input file)
  4  authentication error (key refused, or a baseline is not the caller's)
  5  transport error (network failure to the service or object storage)
  6  replay run --fail-on-hold and the recommendation was "hold"`

export const HELP: Record<string, string> = {
  main: `episodic: record robot runs and regression-test new policies against them.

Usage: episodic <verb> [options]

Verbs:
  serve                      run the HTTP service (ingest API, built-in object store)
  clients create NAME        create a client (tenant)
  clients list               list clients
  keys create --client NAME  mint an API key for a client (printed once)
  keys list --client NAME    list a client's keys
  keys revoke KEY_ID         revoke a key
  episodes archive ID        archive an episode (finalize then answers 409)
  replay run ...             replay a candidate policy over baseline episodes

Every verb takes --help. Configuration comes from the environment:
  DATABASE_URL         PostgreSQL URL (unset: embedded PGlite in EPISODIC_DATA_DIR)
  EPISODIC_DATA_DIR    data folder for the embedded database and objects (./.episodic)
  S3_ENDPOINT, S3_BUCKET, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, S3_REGION
                       S3-compatible object storage (Cloudflare R2, AWS S3, MinIO)
  S3_PUBLIC_BASE_URL   fills public_url in upload URL entries
  EPISODIC_STORAGE     none: no object storage (storage "unconfigured")
  PORT, HOST           listen address (8787, 127.0.0.1)

${EXIT_CODES}`,
  serve: `Usage: episodic serve [--port N] [--host H]

Runs the service. On the first start with an empty database it creates a
client named "default" and prints one API key, once, with a curl line.
On the embedded database, admin verbs (clients, keys, episodes) run while
serve is up: they reach it through a control socket in the data folder.

Options:
  --port N   port to listen on (default $PORT or 8787; 0 picks a free port)
  --host H   address to bind (default $HOST or 127.0.0.1)`,
  clients: `Usage:
  episodic clients create NAME   create a client; NAME: 1-64 of letters, digits, . _ -
  episodic clients list          list clients

Options:
  --json   print JSON`,
  keys: `Usage:
  episodic keys create --client NAME   mint a key (epk_<key_id>_<secret>); shown once
  episodic keys list --client NAME     list key ids, creation and revocation times
  episodic keys revoke KEY_ID          revoke a key (KEY_ID or the whole key)

Options:
  --client NAME   the client
  --json          print JSON`,
  episodes: `Usage:
  episodic episodes archive EPISODE_ID   archive an episode; finalize then answers 409

Options:
  --json   print JSON`,
  replay: `Usage: episodic replay run --policy MODULE:FN --candidate-version V --baseline-episodes IDS [options]

Replays a candidate policy on this machine over baseline episodes: downloads
each baseline's actions.npz and sensors.npz, feeds every step's observation to
the policy, computes the metrics, records a "replay" episode and uploads the
result; then finalizes the eval run and prints the rollup.

Required:
  --policy MODULE:FN         the policy function: MODULE is a .js/.mjs/.ts file or a
                             package resolved from the working directory as import
                             would (its exports' import condition); FN may be dotted
                             (policies.v2.act)
  --candidate-version V      candidate policy version
  --baseline-episodes IDS    comma-separated ids, or @path: a file with one id per line

Options:
  --baseline-version V       baseline policy version
  --name STR                 run label (default: the candidate version)
  --dry-run                  fetch and compute only: no eval run, no uploads
  --profile NAME             credentials profile from ~/.config/episodic/credentials
  --fail-on-hold             exit 6 when the recommendation is "hold" (for CI gates)

Credentials: EPISODIC_API_KEY and EPISODIC_BASE_URL, or the credentials file
(INI: [default] and named profiles with api_key and base_url).

${EXIT_CODES}`,
}
