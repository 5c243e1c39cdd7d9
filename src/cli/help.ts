/** Help texts of every verb (`episodic <verb> --help`). */
export const EXIT_CODES = `Exit codes:
  0  success
  1  unexpected failure (server error, bug)
  2  usage error (unknown verb, bad flag or argument: a malformed id, or one
     naming no client, key, episode or webhook)
  3  configuration error (environment, credentials file, missing input file;
     a client that already exists; data folder in use by another server;
     port in use)
  4  authentication error (key refused, or an id that is not the key's client's)
  5  transport error (network failure to the service, PostgreSQL or object storage)
  6  replay run --fail-on-hold and the verdict was "hold"
  7  replay run --fail-on-hold and the verdict was "inconclusive"
  8  replay run where every episode failed (nothing was compared)
  130 interrupted (Ctrl-C)`

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
  webhooks add --client NAME URL
                             send eval_run.completed to URL (prints its secret once)
  webhooks list --client NAME
                             list a client's webhook endpoints
  webhooks remove WEBHOOK_ID stop sending to an endpoint
  replay run ...             replay a candidate policy over baseline episodes
  upload --video F ...       record an episode: open, upload files (resumable), finalize

Every verb takes --help; --version (-V) prints the version. Configuration comes from the environment:
  DATABASE_URL         PostgreSQL URL (unset: embedded PGlite in EPISODIC_DATA_DIR)
  EPISODIC_DATA_DIR    data folder for the embedded database and objects (./.episodic)
  S3_ENDPOINT, S3_BUCKET, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, S3_REGION
                       S3-compatible object storage (Cloudflare R2, AWS S3, MinIO)
  S3_PUBLIC_BASE_URL   fills public_url in upload URL entries
  EPISODIC_STORAGE     none: no object storage (storage "unconfigured")
  PORT, HOST           listen address (8787, 127.0.0.1)
  More (public URL, secrets, limits, timeouts): the README's Configuration table.

${EXIT_CODES}`,
  serve: `Usage: episodic serve [--port N] [--host H]

Runs the service. On the first start with an empty database it creates a
client named "default" and prints one API key, once, with a curl line.
On the embedded database, admin verbs (clients, keys, episodes, webhooks)
run while serve is up: they reach it through a control socket.
One server per data folder: a second one exits 3 ("data folder ... is in
use by process <pid>"), as does a port in use ("port 8787 is in use; set
PORT"). A lock left by a killed server is taken over.

Rate limits (per instance): EPISODIC_SIGNIN_LIMIT portal sign-ins a minute
per address (10), EPISODIC_RATE_LIMIT API requests a minute per key (off);
EPISODIC_TRUST_PROXY=1 behind a reverse proxy. See docs/hardening.md.
On the embedded database, EPISODIC_EMBEDDED_SHARED_BUFFERS (16MB, say;
default 128MB) sizes its shared buffers, for a computer short of memory.

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
  episodic keys revoke KEY_ID          revoke a key (KEY_ID or the whole key);
                                       with --client NAME, only if it is that client's

Options:
  --client NAME   the client
  --json          print JSON`,
  episodes: `Usage:
  episodic episodes archive EPISODE_ID   archive an episode; finalize then answers 409

Options:
  --json   print JSON`,
  upload: `Usage: episodic upload [--video FILE] [--sensors FILE] [--actions FILE] [options]

Records one episode: opens it, uploads the files (multipart above 64 MiB,
4 parts at a time, each retried with backoff, expired URLs renewed) with a
progress bar on stderr, finalizes it with bytes_total, and prints the
episode id (stdout) and its portal link (stderr).

Files:
  --video FILE               video.mp4 (video/mp4)
  --sensors FILE             sensors.npz
  --actions FILE             actions.npz

Episode fields:
  --name STR  --robot STR  --policy-version V  --env-version V  --git-sha SHA
  --seed N  --fps N  --source real|sim|replay
  --duration SECONDS         the run's wall-clock length (set at finalize)
  --metadata JSON|@FILE      a JSON object, inline or from a file

Options:
  --idempotency-key K        makes the command safe to repeat: the same key reopens
                             the same episode, skips files already stored and
                             resumes unfinished multipart uploads
  --verify                   finalize only if the store holds every file (409 otherwise)
  --profile NAME             credentials profile from ~/.config/episodic/credentials

Ctrl-C stops cleanly (exit 130): with --idempotency-key the stored parts are
kept for the next run; without it the unfinished uploads are aborted.

${EXIT_CODES}`,
  webhooks: `Usage:
  episodic webhooks add --client NAME URL   POST eval_run.completed to URL, signed the
                                            Standard Webhooks way; prints the signing
                                            secret (whsec_...) once
  episodic webhooks list --client NAME      list endpoint ids and URLs
  episodic webhooks remove WEBHOOK_ID       remove an endpoint and its queued deliveries

Deliveries are retried with backoff for 24 hours. See docs/webhooks.md for
the body and how to verify signatures. An unknown client or webhook id exits 2.

Options:
  --client NAME   the client
  --json          print JSON`,
  replay: `Usage: episodic replay run --policy MODULE:FN --candidate-version V --baseline-episodes IDS [options]
       episodic replay run --policy MODULE:FN --resume EVAL_RUN_ID [options]

Replays a candidate policy on this machine over baseline episodes: downloads
each baseline's actions.npz and sensors.npz, feeds every step's observation to
the policy, computes the metrics, records a "replay" episode and uploads the
result; then finalizes the eval run and prints the rollup.

Required:
  --policy MODULE:FN         the policy function: MODULE is a .js/.mjs/.ts file or a
                             package resolved from the working directory as import
                             would (its exports' import condition); FN may be dotted
                             (policies.v2.act); a reset function beside FN runs
                             before each episode. Also: py:package.module:attr or
                             file.py:attr (a Python callable, python3 >= 3.9 with
                             numpy), or ws://host:port (an openpi policy server)
  --candidate-version V      candidate policy version
  --baseline-episodes IDS    comma-separated ids, or @path: a file with one id per line

Options:
  --baseline-version V       baseline policy version
  --name STR                 run label (default: the candidate version)
  --dry-run                  fetch and compute only: no eval run, no uploads
  --resume EVAL_RUN_ID       go on with a pending eval run (one interrupted, or stopped
                             by a network failure): replay only the baselines without a
                             result yet, then finalize; the run keeps its versions,
                             baselines and thresholds
  --profile NAME             credentials profile from ~/.config/episodic/credentials
  --min-episodes N           done episodes needed for a "ship" verdict (1..10000, default 10)
  --max-ood-share X          hold when the mean share of out-of-range actions exceeds X (0..1, default 0.25)
  --fail-on-hold             exit 6 when the verdict is "hold", 7 when "inconclusive" (for CI gates)
  --upload-actions           upload the candidate's actions as the replay episode's
                             actions.npz (the portal plots them beside the baseline's)
  --concurrency N            baseline episodes replayed at once (default 1); results
                             and progress lines keep baseline order
  --prefetch-mb N            read-ahead budget for the next episodes' downloads
                             (default 256; 0 turns read-ahead off)
  --json                     print one JSON document on stdout (the run, each episode's
                             result, the summary); progress lines go to stderr
  --python PATH              interpreter for a Python policy (default python3 on PATH)
  --policy-timeout SECONDS   a policy that takes longer over one step fails that episode
                             and the run goes on: a Python policy's process is stopped,
                             a policy server's connection closed; a JavaScript policy's
                             promise is given up on (a synchronous step is not timed);
                             a Python policy gets each episode whole: SECONDS x its steps
                             (default: no limit)
  --obs-map FROM=TO,...      rename observation keys sent to a policy server
  --action-map FROM=TO,...   rename a policy server's reply keys to action namespaces
  --action-horizon N         the policy server answers with a chunk of N steps' actions
                             (openpi's actions [N, dim]): ask every N steps, use one row
                             per step (default 1: ask every step)
  --prompt TEXT              send TEXT as "prompt" with each observation to a policy
                             server (openpi's task instruction)
  --prompt-field NAME        the prompt of each episode: its baseline's metadata.NAME
                             (--prompt, if given, where that is missing)

Replay is open-loop: the candidate never changes what it observes, so outcome
values are what the policy reports through _outcome (or the baseline's); the
output says which. See docs/verdict.md for the statistics and the verdict.

Credentials: EPISODIC_API_KEY and EPISODIC_BASE_URL, or the credentials file
(INI: [default] and named profiles with api_key and base_url).
A policy server that wants a key gets EPISODIC_POLICY_API_KEY from the
environment, sent as openpi's "Authorization: Api-Key <key>".

${EXIT_CODES}`,
}
