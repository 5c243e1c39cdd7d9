/**
 * The conformance suite in-process, through `app.request` (no port): the
 * Node adapter's app on PGlite always, and on the real PostgreSQL server when
 * TEST_DATABASE_URL is set (required under CI=true).
 */
import { DATABASES } from '../helpers/databases.ts'
import { describeConformance } from './suite.ts'
import { inProcessTarget } from './target.ts'

for (const kind of DATABASES) describeConformance(`conformance in-process on ${kind}`, () => inProcessTarget(kind))
