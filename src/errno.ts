/**
 * Catching system errors by name: a caller names the codes it expects (`ENOENT`:
 * nothing is there yet), and every other failure (EACCES, EIO, a bug) goes on
 * to be reported rather than taken for the expected one.
 */

/** Whether `error` is a system error with one of `codes`. */
export function isErrnoCode(error: unknown, ...codes: string[]): boolean {
  const code = (error as NodeJS.ErrnoException | null | undefined)?.code;
  return code !== undefined && codes.includes(code);
}

/** What `promise` resolves to, or null when it fails with one of `codes`; any other failure is thrown. */
export async function orNullOn<T>(promise: Promise<T>, ...codes: string[]): Promise<T | null> {
  try {
    return await promise;
  } catch (error) {
    if (!isErrnoCode(error, ...codes)) throw error;
    return null;
  }
}
