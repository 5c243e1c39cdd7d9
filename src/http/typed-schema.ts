/**
 * Gives a valibot schema an explicit, written-out type. Published types must
 * be explicit (JSR refuses inferred "slow types" in a public API, and written
 * interfaces carry doc comments), yet the schema stays the single source of
 * truth: `typed` does not compile unless the schema's inferred input and
 * output are the declared types (same keys, assignable both ways).
 *
 * @example
 * export interface Ping { ok: boolean }
 * export const PingSchema: v.GenericSchema<Ping> = typed<Ping>()(v.object({ ok: v.boolean() }))
 */
import type * as v from 'valibot'

type Same<A, B> = [A] extends [B] ? [B] extends [A] ? [keyof A] extends [keyof B] ? [keyof B] extends [keyof A] ? true
      : false
    : false
  : false
  : false

/** `unknown` when the schema matches; otherwise a property the argument lacks, which names the mismatch. */
type Matches<S extends v.GenericSchema, In, Out> = Same<v.InferInput<S>, In> extends true ? Same<v.InferOutput<S>, Out> extends true ? unknown
  : { 'the schema output differs from the declared type': Out }
  : { 'the schema input differs from the declared type': In }

/** Returns the schema unchanged, typed as `GenericSchema<In, Out>` once it is checked to match. */
export function typed<In, Out = In>(): <S extends v.GenericSchema>(schema: S & Matches<S, In, Out>) => v.GenericSchema<In, Out> {
  return (schema) => schema as v.GenericSchema<In, Out>
}
