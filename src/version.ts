/** The package version (package.json, jsr.json and deno.json say the same; a test checks). */
export const VERSION = '0.2.0'
