import { ConflictError, NotFoundError } from '../errors.js';

// Prisma's error codes are translated here and nowhere else.

function prismaCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^P\d{4}$/.test(code) ? code : undefined;
}

export async function translateWriteErrors<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    switch (prismaCode(error)) {
      case 'P2002':
        throw new ConflictError(`${what} already exists`);
      case 'P2025':
      case 'P2001':
        throw new NotFoundError(`${what} not found`);
      case 'P2003':
        throw new ConflictError(`${what} is referenced by other records`);
      default:
        throw error;
    }
  }
}
