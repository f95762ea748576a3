export { appendAudit, argumentDigest, asActor, auditRowsJson, pruneAudit, withAudit } from './audit-log.ts';
export type { AuditEntry } from './audit-log.ts';
export { listAudit } from './audit-query.ts';
export type { AuditFilter, AuditPage, AuditView } from './audit-query.ts';
