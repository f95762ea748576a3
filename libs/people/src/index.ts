export { covers, isRole, NEEDS, parseGrant, ROLES } from './roles.ts';
export type { Grant, Need } from './roles.ts';
export { BOOTSTRAP_PRINCIPAL, listScope, mayAct, mayUse } from './principal.ts';
export type { ListScope, Principal, ResourceOwner } from './principal.ts';
export {
  addPerson,
  adminExists,
  effectiveOperators,
  getPerson,
  grantRole,
  linkIdentity,
  listPeople,
  normalizeIdentity,
  PeopleError,
  personKeyOf,
  personOfIdentity,
  principalOf,
  removePerson,
  requirePerson,
  revokeRole,
  updatePerson,
} from './people-store.ts';
export type { NewPerson, Person, PersonPatch } from './people-store.ts';
export { createToken, getToken, listTokens, parseDuration, revokeToken, verifyToken } from './api-tokens.ts';
export type { CreatedToken, NewToken, TokenView } from './api-tokens.ts';
export { createLinkCode, LINK_CODE_TTL_MS, redeemLinkCode } from './link-codes.ts';
export type { LinkCode, LinkOutcome } from './link-codes.ts';
export { erasePerson, exportPerson, PERSON_EXPORT_FORMAT } from './person-data.ts';
export type { ErasedCounts, PersonExport } from './person-data.ts';
