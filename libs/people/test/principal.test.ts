import { describe, expect, it } from 'vitest';
import { BOOTSTRAP_PRINCIPAL, listScope, mayAct, mayUse, parseDuration, parseGrant, principalOf } from '@herald/people';
import type { Person, Principal } from '@herald/people';

const person = (grants: Person['grants'], identities: string[] = ['api:ana']): Person => ({
  id: '00000000-0000-4000-8000-000000000001',
  displayName: 'Ana',
  key: identities[0] ?? 'api:ana',
  identities,
  grants,
  createdAt: new Date(0),
  updatedAt: new Date(0),
});

describe('what a principal may do', () => {
  it('lets the bootstrap token do everything, everywhere', () => {
    expect(mayAct(BOOTSTRAP_PRINCIPAL, 'admin', {})).toBe(true);
    expect(listScope(BOOTSTRAP_PRINCIPAL, 'read')).toEqual({ kind: 'all' });
  });

  it('keeps a member to what they own, in the profiles granted', () => {
    const member = principalOf(person([{ role: 'member', profiles: ['main'] }]), []);
    expect(mayUse(member, 'read')).toBe(true);
    expect(mayUse(member, 'operate')).toBe(false);
    expect(mayAct(member, 'read', { profileId: 'main', ownerKey: 'api:ana' })).toBe(true);
    expect(mayAct(member, 'read', { profileId: 'main', ownerKey: 'api:bob' })).toBe(false);
    expect(mayAct(member, 'read', { profileId: 'ops', ownerKey: 'api:ana' })).toBe(false);
    expect(mayAct(member, 'read', { profileId: 'main', ownerKey: null })).toBe(false);
    expect(listScope(member, 'read')).toEqual({ kind: 'own', ownerKey: 'api:ana', profiles: ['main'] });
  });

  it('lets a viewer read the profiles granted and change nothing', () => {
    const viewer = principalOf(person([{ role: 'viewer', profiles: ['main'] }]), []);
    expect(mayAct(viewer, 'read', { profileId: 'main', ownerKey: 'api:bob' })).toBe(true);
    expect(mayAct(viewer, 'read', { profileId: 'ops' })).toBe(false);
    expect(mayUse(viewer, 'write-own')).toBe(false);
    expect(mayUse(viewer, 'chat')).toBe(false);
    expect(listScope(viewer, 'read')).toEqual({ kind: 'profiles', profiles: ['main'] });
  });

  it('makes an identity in HERALD_OPERATORS an operator on every profile, linked or not', () => {
    const linked = principalOf(person([], ['api:ana', 'telegram:42']), ['telegram:42']);
    expect(mayAct(linked, 'operate', {})).toBe(true);
    expect(mayAct(linked, 'admin', {})).toBe(false);
    const plain: Principal = principalOf(person([]), ['telegram:42']);
    expect(mayUse(plain, 'read')).toBe(false);
  });

  it('reads grants and durations as people write them', () => {
    expect(parseGrant('operator:main,ops')).toEqual({ role: 'operator', profiles: ['main', 'ops'] });
    expect(parseGrant('admin')).toEqual({ role: 'admin', profiles: [] });
    expect(parseGrant('owner')).toBeUndefined();
    expect(parseDuration('30d')).toBe(30 * 86_400_000);
    expect(parseDuration('90m')).toBe(90 * 60_000);
    expect(parseDuration('0d')).toBeUndefined();
    expect(parseDuration('soon')).toBeUndefined();
  });
});
