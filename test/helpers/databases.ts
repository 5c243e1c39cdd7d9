/**
 * The database kinds a cross-cutting suite runs on: PGlite always, the real
 * PostgreSQL server when TEST_DATABASE_URL is set (required under CI).
 */
import { postgresAvailable } from './postgres.ts'
import type { DatabaseKind } from './service.ts'

export const DATABASES: DatabaseKind[] = postgresAvailable() ? ['pglite', 'postgres'] : ['pglite']
