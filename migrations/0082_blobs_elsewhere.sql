-- Blob bytes may live in an S3-compatible bucket (HERALD_BLOB_URL): the row keeps the metadata
-- (ownership, retention, pruning stay in Postgres) and data is NULL.
ALTER TABLE blobs ALTER COLUMN data DROP NOT NULL;
