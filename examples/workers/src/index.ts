/**
 * The episodic service as a Cloudflare Worker: PostgreSQL through Hyperdrive,
 * uploads into the R2 bucket bound as BUCKET (see ../wrangler.toml).
 */
import { createWorker } from 'episodic/workers'

export default createWorker()
