/**
 * Where blob bytes live when not in Postgres: an S3-compatible bucket, from HERALD_BLOB_URL
 * `s3://<bucket>[/<prefix>][?endpoint=<http(s) url>&region=<region>&force_path_style=true]`.
 * Credentials are the AWS SDK's own (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, a profile, a role).
 */
export interface S3BlobLocation {
  bucket: string;
  /** Prepended to each object's key, without a trailing slash; '' for the bucket's root. */
  prefix: string;
  /** A non-AWS server (MinIO, R2, Ceph...); null: AWS itself. */
  endpoint: string | null;
  region: string;
  forcePathStyle: boolean;
}

const QUERY_KEYS = new Set(['endpoint', 'region', 'force_path_style']);

/** The location HERALD_BLOB_URL names, or a sentence saying what is wrong with it. */
export function parseBlobUrl(text: string): S3BlobLocation | string {
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return 'expected s3://<bucket>/<prefix>?endpoint=...&region=...';
  }
  if (parsed.protocol !== 's3:') return 'expected an s3:// url (or nothing, for the blobs table in Postgres)';
  if (parsed.username !== '' || parsed.password !== '') return 'credentials do not go in the url: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY';
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(parsed.hostname)) return "the bucket name (the url's host) is not a valid S3 bucket name";
  const unknown = [...parsed.searchParams.keys()].find((key) => !QUERY_KEYS.has(key));
  if (unknown !== undefined) return `unknown parameter ${unknown} (known: endpoint, region, force_path_style)`;
  const endpoint = parsed.searchParams.get('endpoint');
  if (endpoint !== null && !/^https?:\/\/[^/]/.test(endpoint)) return 'endpoint must be an http(s) url';
  const pathStyle = parsed.searchParams.get('force_path_style') ?? 'false';
  if (pathStyle !== 'true' && pathStyle !== 'false') return 'force_path_style must be true or false';
  const prefix = decodeURIComponent(parsed.pathname).replace(/^\/+|\/+$/g, '');
  if (prefix.split('/').some((part) => part === '..' || part === '.')) return 'the prefix may not contain . or .. segments';
  return {
    bucket: parsed.hostname,
    prefix,
    endpoint,
    region: parsed.searchParams.get('region') ?? 'us-east-1',
    forcePathStyle: pathStyle === 'true',
  };
}
