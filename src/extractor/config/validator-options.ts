/** Options shared by the build-time validator generator and the runtime fallback. */
export const AJV_OPTIONS = { allErrors: true, verbose: true, strict: false } as const;

/** The precompiled validator, next to validate.js in the build output. */
export const GENERATED_VALIDATOR = './parameters-validator.generated.js';
